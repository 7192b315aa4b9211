"""Benchmark data: deterministic names, bulk records by raw SQL, and one well-linked record.

Bulk records are left as record_create would leave them: the record at version 1, its first
stored version, its record.created audit event, the names counters moved once per record and
its full-text document. On SQLite they go in with executemany in one transaction and the
triggers keep counters and full-text index. On PostgreSQL the per-row triggers are the
bottleneck (every row upserts the same two counter rows, so the run slows as those rows' dead
versions pile up): the rows are COPYed with the record triggers disabled inside the
transaction, and one set-based pass then does what the triggers would have (bulk_postgres).
The record the context benchmarks read is written through the services, with real links and
history.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction

from anchor_site.devtools.benchmarks import bulk_postgres
from anchor_site.devtools.benchmarks.bulk_postgres import BulkRow
from records import services
from records.ids import new_id
from records.models import Collection, Record
from records.services import CollectionFields, WriteContext

WORKSPACE = "bench"
ACTOR = "bench-agent"
REASON = "benchmark data"
CHUNK = 10_000
STATUSES = ("open", "planned", "blocked", "done", "dropped")
SYLLABLES = (
    "ka",
    "ri",
    "ta",
    "ab",
    "hi",
    "shek",
    "pri",
    "ya",
    "ra",
    "hul",
    "an",
    "na",
    "mo",
    "la",
    "de",
    "vi",
    "su",
    "ni",
    "ko",
    "ma",
    "te",
    "lo",
    "sa",
    "re",
    "no",
    "bi",
    "ja",
    "ke",
    "tu",
    "ro",
    "mi",
    "da",
    "ne",
    "si",
    "go",
    "li",
    "za",
    "ha",
    "yo",
    "ve",
    "ru",
    "pe",
    "fa",
    "ci",
    "do",
)


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
    rng = random.Random(seed)
    pairs = [f"{first} {last}" for first in firsts for last in lasts]
    rng.shuffle(pairs)
    return pairs[:count]


def typo(name: str, seed: int) -> str:
    """One adjacent transposition, the commonest slip: "Kirat" -> "Kriat"."""
    rng = random.Random(seed)
    i = rng.randrange(1, max(2, len(name) - 1))
    return name[:i] + name[i + 1] + name[i] + name[i + 2 :] if i + 1 < len(name) else name + "e"


@dataclass(frozen=True)
class BulkRecord:
    title: str
    data: dict


def bulk_insert(collection_id: str, rows: Iterator[BulkRecord]) -> int:
    """Insert rows as record_create would, in one transaction; returns the count."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            rows_to_copy = _values(collection_id, rows, start)
            return bulk_postgres.load(collection_id, rows_to_copy, WORKSPACE, ACTOR, REASON)
        return _insert_sqlite(collection_id, rows, start)


def _values(collection_id: str, rows: Iterator[BulkRecord], start: datetime) -> Iterator[BulkRow]:
    for index, row in enumerate(rows):
        record_id = new_id()
        after = {
            "collection_id": collection_id,
            "title": row.title,
            "data": row.data,
            "version": 1,
            "archived_at": None,
            "aliases": [],
        }
        yield BulkRow(
            record_id,
            collection_id,
            row.title,
            json.dumps(row.data),
            start + timedelta(seconds=index),
            json.dumps(after),
        )


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


def _insert_sqlite(collection_id: str, rows: Iterator[BulkRecord], start: datetime) -> int:
    count = 0
    raw = connection.connection  # the sqlite3 connection: executemany without Django's wrapping
    chunks: tuple[list[tuple], list[tuple], list[tuple]] = ([], [], [])

    def flush() -> None:
        for sql, chunk in zip(SQLITE_INSERTS, chunks, strict=True):
            raw.executemany(sql, chunk)
            chunk.clear()

    for row in _values(collection_id, rows, start):
        stamp = connection.ops.adapt_datetimefield_value(row.at)  # Django's own text form
        chunks[0].append(
            (row.record_id, WORKSPACE, collection_id, row.title, row.data, ACTOR, stamp, stamp)
        )
        chunks[1].append((row.record_id, row.title, row.data, ACTOR, stamp))
        chunks[2].append(
            (WORKSPACE, ACTOR, row.record_id, row.record_id, collection_id, row.after, REASON)
            + (stamp,)
        )
        count += 1
        if len(chunks[0]) >= CHUNK:
            flush()
    flush()
    return count


def people(names: list[str]) -> Iterator[BulkRecord]:
    for index, name in enumerate(names):
        yield BulkRecord(name, {"status": STATUSES[index % len(STATUSES)], "n": index})


def tasks(count: int, vocabulary: list[str], seed: int) -> Iterator[BulkRecord]:
    """Records with a three-word title and eight words of notes drawn from `vocabulary`."""
    rng = random.Random(seed)
    for index in range(count):
        title = " ".join(rng.choices(vocabulary, k=3)).capitalize()
        yield BulkRecord(
            title,
            {
                "status": STATUSES[rng.randrange(len(STATUSES))],
                "amount": rng.randrange(100_000),
                "notes": " ".join(rng.choices(vocabulary, k=8)),
                "n": index,
            },
        )


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
    neighbours: list[Record] = []
    for index in range(links):
        neighbour = services.record_create(
            ctx=ctx,
            collection_id=team.pk,
            title=f"Teammate {index}",
            data={"role": "engineer", "level": index % 5},
        )
        services.relationship_create(
            ctx=ctx, source_id=hub.pk, relationship_type="works_with", target_id=neighbour.pk
        )
        neighbours.append(neighbour)
    for index in range(events):
        services.record_update(
            ctx=ctx, record_id=hub.pk, changes={"level": index}, expected_version=index + 1
        )
    return LinkedRecord(team.pk, hub.pk, [n.pk for n in neighbours])
