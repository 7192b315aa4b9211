"""Benchmark data: deterministic names, bulk records by raw SQL, and one well-linked record.

Bulk rows go in with one INSERT per row (COPY on PostgreSQL) in a single transaction, so the
database triggers still maintain the names counters and the full-text index, exactly as for a
service write. They carry no version history or audit events: only name and search reads touch
them. The record the context benchmarks read is written through the services, with real links
and history.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction

from records import services
from records.ids import new_id
from records.models import Collection, Record
from records.services import CollectionFields, WriteContext

WORKSPACE = "bench"
ACTOR = "bench-agent"
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
    return WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason="benchmark data")


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
    """Insert rows straight into records_record, in one transaction; returns the count."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    count = 0
    with transaction.atomic():
        if connection.vendor == "postgresql":
            count = _copy_postgres(collection_id, rows, start)
        else:
            count = _insert_sqlite(collection_id, rows, start)
    return count


def _values(collection_id: str, rows: Iterator[BulkRecord], start: datetime):
    for index, row in enumerate(rows):
        at = start + timedelta(seconds=index)
        yield (new_id(), WORKSPACE, collection_id, row.title, json.dumps(row.data), at)


def _insert_sqlite(collection_id: str, rows: Iterator[BulkRecord], start: datetime) -> int:
    sql = (
        "INSERT INTO records_record (id, workspace_id, collection_id, title, data, version, "
        "created_by, created_at, updated_at, archived_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, NULL)"
    )
    count = 0
    raw = connection.connection  # the sqlite3 connection: executemany without Django's wrapping
    chunk: list[tuple] = []
    for record_id, ws, coll, title, data, at in _values(collection_id, rows, start):
        stamp = connection.ops.adapt_datetimefield_value(at)  # Django's own text form
        chunk.append((record_id, ws, coll, title, data, ACTOR, stamp, stamp))
        if len(chunk) >= CHUNK:
            raw.executemany(sql, chunk)
            count += len(chunk)
            chunk = []
    if chunk:
        raw.executemany(sql, chunk)
        count += len(chunk)
    return count


def _copy_postgres(collection_id: str, rows: Iterator[BulkRecord], start: datetime) -> int:
    count = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg's own cursor, for COPY
        with raw.copy(
            "COPY records_record (id, workspace_id, collection_id, title, data, version, "
            "created_by, created_at, updated_at) FROM STDIN"
        ) as copy:
            for record_id, ws, coll, title, data, at in _values(collection_id, rows, start):
                copy.write_row((record_id, ws, coll, title, data, 1, ACTOR, at, at))
                count += 1
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
