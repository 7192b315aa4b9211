"""Benchmark data: deterministic names, bulk records, the long history, scratch databases.

Bulk records are left as record_create would leave them (tests/test_benchmark_data.py compares
both). SQLite takes them by executemany, its triggers doing the rest; on PostgreSQL the rows are
COPYed with the record triggers disabled, and one set-based pass does what the triggers would.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from django.core.management import call_command
from django.db import connection, transaction

from anchor_site.devtools.benchmarks.measure import Row, Sizes, timed
from records import services
from records.ids import new_id
from records.models import AuditEvent, Collection, Record
from records.services import CollectionFields, WriteContext

WORKSPACE = "bench"
ACTOR = "bench-agent"
REASON = "benchmark data"
CHUNK = 10_000
STATUSES = ("open", "planned", "blocked", "done", "dropped")
SYLLABLES = (  # noqa: SIM905 (one line of syllables reads better than 45)
    "ka ri ta ab hi shek pri ya ra hul an na mo la de vi su ni ko ma te lo sa re no bi ja ke tu "
    "ro mi da ne si go li za ha yo ve ru pe fa ci do"
).split()


def context() -> WriteContext:
    services.workspace_ensure(WORKSPACE)
    return WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason=REASON)


def collection(ctx: WriteContext, name: str) -> Collection:
    return services.collection_create(
        ctx=ctx,
        fields=CollectionFields.validated(
            name=name,
            purpose=f"Benchmark {name}",
            record_meaning=f"One of the {name}",
            typical_fields=["status", "amount"],
            relationship_guidance="",
        ),
    )


def collection_named(name: str) -> str:
    return Collection.objects.get(workspace_id=WORKSPACE, name=name).pk


def words(count: int, seed: int) -> list[str]:
    """`count` distinct pronounceable words of 2-4 syllables."""
    rng = random.Random(seed)
    found: dict[str, None] = {}
    while len(found) < count:
        found["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(found)


def person_names(count: int, seed: int = 1) -> list[str]:
    """`count` distinct "First Last" names, like the people an agent tracks."""
    side = int(count**0.5) + 2
    firsts = [w.capitalize() for w in words(side, seed)]
    lasts = [w.capitalize() for w in words(side, seed + 1)]
    pairs = [f"{first} {last}" for first in firsts for last in lasts]
    random.Random(seed).shuffle(pairs)
    return pairs[:count]


def typo(name: str, seed: int) -> str:
    """One adjacent transposition, the commonest slip: "Kirat" -> "Kriat"."""
    i = random.Random(seed).randrange(1, max(2, len(name) - 1))
    return name[:i] + name[i + 1] + name[i] + name[i + 2 :] if i + 1 < len(name) else name + "e"


@dataclass(frozen=True)
class BulkRecord:
    title: str
    data: dict[str, Any]


def people(names: list[str]) -> Iterator[BulkRecord]:
    for index, name in enumerate(names):
        yield BulkRecord(name, {"status": STATUSES[index % len(STATUSES)], "n": index})


def tasks(count: int, vocabulary: list[str], seed: int) -> Iterator[BulkRecord]:
    """Records with a three-word title and eight words of notes drawn from `vocabulary`."""
    rng = random.Random(seed)
    for index in range(count):
        notes = " ".join(rng.choices(vocabulary, k=8))
        title = " ".join(rng.choices(vocabulary, k=3)).capitalize()
        status, amount = STATUSES[rng.randrange(len(STATUSES))], rng.randrange(100_000)
        yield BulkRecord(title, {"status": status, "amount": amount, "notes": notes, "n": index})


def bulk_insert(collection_id: str, rows: Iterable[BulkRecord]) -> int:
    """Insert rows as record_create would, in one transaction; returns the count."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    values = ((new_id(), row, start + timedelta(seconds=i)) for i, row in enumerate(rows))
    with transaction.atomic():
        if connection.vendor == "postgresql":
            return _copy_postgres(collection_id, values)
        return _insert_sqlite(collection_id, values)


def _after(collection_id: str, row: BulkRecord) -> str:
    """The record.created event's "after": the record's state view."""
    state = {"collection_id": collection_id, "title": row.title, "data": row.data}
    return json.dumps({**state, "version": 1, "archived_at": None, "aliases": []})


SQLITE_INSERTS = (
    "INSERT INTO records_record (id, workspace_id, collection_id, title, data, version, "
    "created_by, created_at, updated_at, archived_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, NULL)",
    "INSERT INTO records_recordversion (record_id, version, title, data, aliases, archived_at, "
    "actor_id, recorded_at) VALUES (?, 1, ?, ?, '[]', NULL, ?, ?)",
    "INSERT INTO records_auditevent (workspace_id, actor_id, kind, entity_type, entity_id, "
    "record_id, collection_id, before, after, decision_reason, agent_reported_clarification, "
    "review_evidence, action_id, item_index, created_at) VALUES (?, ?, 'record.created', "
    "'record', ?, ?, ?, NULL, ?, ?, '', '[]', '', NULL, ?)",
)


def _insert_sqlite(collection_id: str, values: Iterator[tuple[str, BulkRecord, datetime]]) -> int:
    raw = connection.connection  # the sqlite3 connection: executemany without Django's wrapping
    chunks: list[list[tuple[Any, ...]]] = [[], [], []]

    def flush() -> None:
        for sql, chunk in zip(SQLITE_INSERTS, chunks, strict=True):
            raw.executemany(sql, chunk)
            chunk.clear()

    count = 0
    for pk, row, at in values:
        count += 1
        stamp = connection.ops.adapt_datetimefield_value(at)  # Django's own text form
        data, title, after = json.dumps(row.data), row.title, _after(collection_id, row)
        chunks[0].append((pk, WORKSPACE, collection_id, title, data, ACTOR, stamp, stamp))
        chunks[1].append((pk, title, data, ACTOR, stamp))
        chunks[2].append((WORKSPACE, ACTOR, pk, pk, collection_id, after, REASON, stamp))
        if len(chunks[0]) >= CHUNK:
            flush()
    flush()
    return count


RECORD_TRIGGERS = ("records_record_names", "records_record_search", "records_record_count")
# What record_create writes beside each record just copied (those without a first version).
BESIDE_EACH_RECORD = (
    """INSERT INTO records_recordversion (record_id, version, title, data, aliases,
        archived_at, actor_id, recorded_at)
    SELECT r.id, 1, r.title, r.data, '[]', NULL, r.created_by, r.created_at
    FROM records_record r JOIN bench_loaded l ON l.id = r.id""",
    """INSERT INTO records_auditevent (workspace_id, actor_id, kind, entity_type, entity_id,
        record_id, collection_id, before, after, decision_reason,
        agent_reported_clarification, review_evidence, action_id, item_index, created_at)
    SELECT r.workspace_id, r.created_by, 'record.created', 'record', r.id, r.id,
        r.collection_id, NULL,
        jsonb_build_object('collection_id', r.collection_id, 'title', r.title, 'data', r.data,
            'version', 1, 'archived_at', NULL, 'aliases', '[]'::jsonb),
        %s, '', '[]', '', NULL, r.created_at
    FROM records_record r JOIN bench_loaded l ON l.id = r.id ORDER BY r.created_at, r.id""",
    """INSERT INTO records_record_search (record_id, document)
    SELECT r.id, anchor_search_document(r.title, r.data)
    FROM records_record r JOIN bench_loaded l ON l.id = r.id""",
)


def _copy_postgres(collection_id: str, values: Iterator[tuple[str, BulkRecord, datetime]]) -> int:
    """COPY inside the caller's transaction (ALTER TABLE is transactional: a failed load leaves
    the triggers on), then do once for the load what the triggers do per row."""
    with connection.cursor() as cursor:
        for trigger in RECORD_TRIGGERS:
            cursor.execute(f"ALTER TABLE records_record DISABLE TRIGGER {trigger}")
        count = 0
        with cursor.cursor.copy(  # psycopg's own cursor, for COPY
            "COPY records_record (id, workspace_id, collection_id, title, data, version, "
            "created_by, created_at, updated_at) FROM STDIN"
        ) as copy:
            for pk, row, at in values:
                data = json.dumps(row.data)
                copy.write_row((pk, WORKSPACE, collection_id, row.title, data, 1, ACTOR, at, at))
                count += 1
        # Every write path stores a first version with its record: those without are the copied.
        cursor.execute(
            "CREATE TEMPORARY TABLE bench_loaded AS SELECT r.id FROM records_record r "
            "WHERE r.collection_id = %s AND NOT EXISTS "
            "(SELECT 1 FROM records_recordversion v WHERE v.record_id = r.id)",
            [collection_id],
        )
        for statement in BESIDE_EACH_RECORD:
            cursor.execute(statement, [REASON] if "%s" in statement else [])
        cursor.execute("DROP TABLE bench_loaded")
        if count:  # where a bump per row would have left the names counters and active count
            cursor.execute(
                "INSERT INTO records_revisioncounter (workspace_id, key, value) VALUES "
                "(%s, %s, %s), (%s, 'names:*', %s) ON CONFLICT (workspace_id, key) "
                "DO UPDATE SET value = records_revisioncounter.value + EXCLUDED.value",
                [WORKSPACE, f"names:{collection_id}", count, WORKSPACE, count],
            )
            cursor.execute(
                "INSERT INTO records_collectioncount (collection_id, workspace_id, active) "
                "VALUES (%s, %s, %s) ON CONFLICT (collection_id) "
                "DO UPDATE SET active = records_collectioncount.active + EXCLUDED.active",
                [collection_id, WORKSPACE, count],
            )
        # The copied rows' deferred foreign-key checks are pending trigger events, and a table
        # with pending events cannot be altered: run the checks now, then defer again.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for trigger in RECORD_TRIGGERS:
            cursor.execute(f"ALTER TABLE records_record ENABLE TRIGGER {trigger}")
        # What autovacuum soon does on a live server: plans then fit the data they read.
        for table in ("records_record", "records_record_search", "records_recordversion"):
            cursor.execute(f"ANALYZE {table}")
    return count


@dataclass(frozen=True)
class LinkedRecord:
    collection_id: str
    record_id: str
    neighbour_ids: list[str]


def linked_record(ctx: WriteContext, *, links: int = 20, events: int = 10) -> LinkedRecord:
    """A record with `links` links and `events` updates, all written through the services."""
    team = collection(ctx, "bench team")
    hub = services.record_create(
        ctx=ctx, collection_id=team.pk, title="Kirat Hub", data={"role": "lead", "level": 3}
    )
    neighbours = []
    for index in range(links):
        data = {"role": "engineer", "level": index % 5}
        made = services.record_create(
            ctx=ctx, collection_id=team.pk, title=f"Teammate {index}", data=data
        )
        services.relationship_create(
            ctx=ctx, source_id=hub.pk, relationship_type="works_with", target_id=made.pk
        )
        neighbours.append(made.pk)
    for index in range(events):
        services.record_update(
            ctx=ctx, record_id=hub.pk, changes={"level": index}, expected_version=index + 1
        )
    return LinkedRecord(team.pk, hub.pk, neighbours)


# --- the long history: bulk task records, shared by the session and search rows ---------------


def vocabulary() -> list[str]:
    """The words task titles and notes are drawn from (the search rows look one up)."""
    return words(5000, seed=11)


def task_collections(ctx: WriteContext, count: int) -> list[str]:
    """IDs of the `count` task collections, made the first time they are asked for."""
    names = [f"bench tasks {index}" for index in range(count)]
    found = dict(
        Collection.objects.filter(workspace_id=WORKSPACE, name__in=names).values_list("name", "pk")
    )
    return [found.get(name) or collection(ctx, name).pk for name in names]


def add_tasks(ctx: WriteContext, sizes: Sizes, count: int) -> None:
    """`count` more task records, spread evenly over the task collections; the seeds move on
    with what is stored, so a top-up adds new titles, not the same ones."""
    collections = task_collections(ctx, sizes.collections)
    stored = Record.objects.filter(collection_id__in=collections).count()
    per = count // len(collections)
    for index, collection_id in enumerate(collections):
        share = per if index else count - per * (len(collections) - 1)
        if share:
            bulk_insert(collection_id, tasks(share, vocabulary(), seed=stored + index))


def events() -> int:
    return AuditEvent.objects.filter(workspace_id=WORKSPACE).count()


def history(sizes: Sizes, ctx: WriteContext) -> Row:
    """Fill the workspace up to sizes.events audit events (day 300 of a project: most of them
    about records the agent is not looking at); the row says how long it took."""
    task_collections(ctx, sizes.collections)  # their own events count towards the history
    missing = max(0, sizes.events - events())
    elapsed, _ = timed(lambda: add_tasks(ctx, sizes, missing))
    return Row(
        f"long history: {events():,} audit events in the workspace, {missing:,} added as bulk "
        "records (record + version + record.created event each)",
        elapsed,
        "s",
        note=f"{missing / elapsed:,.0f} records/s" if missing and elapsed else "",
    )


# --- scratch databases ---------------------------------------------------------------------------


@contextlib.contextmanager
def scratch_database(url: str, name: str = "") -> Iterator[str]:
    """A PostgreSQL database created beside `url`'s for the block, and dropped after it: its URL."""
    parts = urlsplit(url)
    name = name or f"{parts.path.lstrip('/')}_scratch_{os.getpid()}"

    def execute(sql: str) -> None:
        try:
            conn = psycopg.connect(url, autocommit=True)
        except psycopg.OperationalError:
            # The named database need not exist (pytest-django only makes test_<name>):
            # CREATE and DROP DATABASE work from the maintenance database too.
            conn = psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True)
        with conn:
            conn.execute(sql)

    execute(f'DROP DATABASE IF EXISTS "{name}"')
    execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def new_database(tmp: Path, name: str) -> Iterator[None]:
    """The default connection pointed at a new, migrated database for the block's length."""
    database = connection.settings_dict
    saved = database["NAME"]
    connection.close()
    with contextlib.ExitStack() as scratch:
        if connection.vendor == "sqlite":
            database["NAME"] = str(tmp / f"{name}.db")
        else:
            database["NAME"] = f"{saved}_{name}"[:63]
            scratch.enter_context(scratch_database(os.environ["DATABASE_URL"], database["NAME"]))
        try:
            call_command("migrate", interactive=False, verbosity=0)
            yield
        finally:
            connection.close()
            database["NAME"] = saved


def bulk_links(links: list[tuple[str, str, str]]) -> None:
    """(source, type, target) links inserted directly, in one transaction."""
    start = datetime(2024, 6, 1, tzinfo=UTC)
    stamp = connection.ops.adapt_datetimefield_value
    rows = [
        (new_id(), WORKSPACE, source, kind, target, ACTOR, stamp(start + timedelta(seconds=i)))
        for i, (source, kind, target) in enumerate(links)
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        for offset in range(0, len(rows), CHUNK):
            cursor.executemany(
                "INSERT INTO records_relationship (id, workspace_id, source_id, relationship_type, "
                "target_id, created_by, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                rows[offset : offset + CHUNK],
            )
        if connection.vendor == "postgresql":
            # As autovacuum soon would: without it the planner takes the links table for a
            # dozen rows and looks up 35,000 link pairs one record at a time.
            cursor.execute("ANALYZE records_relationship")
