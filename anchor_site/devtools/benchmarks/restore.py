"""Restore at 5,000 and 50,000 records through the export format, with the ratio in one run.

Each store is written by the export's own writer (records.transfer.write_export) from rows
made in memory: per record two versions and their two audit events, a link to the record
before it with its event, and an alias on every tenth; spread over five collections. It is
then restored into this run's database as a new workspace, and the phases are timed: the
file check, the load (rows and search index, through the triggers that stay on), and the
counters and statistics set once at the end. On SQLite a row also says what `PRAGMA
optimize` would cost after the restore and what it changes for grouping by linked record.
"""

from __future__ import annotations

import random
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.db import connection, models

from anchor_site.devtools.benchmarks.measure import Row, Sizes
from records import transfer
from records.models import (
    AuditEvent,
    Collection,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
)
from records.names import normalize_name
from records.selectors.aggregation import aggregate

AREA = "restore"
TARGET_RATIO = 12
COLLECTIONS = 5
ACTOR = "bench-restore"


class Store:
    """The rows of one generated workspace, made on demand in the export's table order."""

    def __init__(self, workspace_id: str, records: int, seed: int) -> None:
        self.workspace_id = workspace_id
        self.records = records
        rng = random.Random(seed)
        self.ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(records)]
        self.collections = [
            str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(COLLECTIONS)
        ]
        self.start = datetime(2024, 1, 1, tzinfo=UTC)
        self.first_event = seed * 10_000_000

    def at(self, index: int, step: int = 0) -> datetime:
        return self.start + timedelta(seconds=index, microseconds=step)

    def tables(self) -> Iterator[tuple[type[models.Model], Iterator[models.Model]]]:
        yield Collection, self._collections()
        yield Record, self._records()
        yield RecordVersion, self._versions()
        yield RecordAlias, self._aliases()
        yield Relationship, self._links()
        yield AuditEvent, self._events()

    def _collections(self) -> Iterator[models.Model]:
        for n, pk in enumerate(self.collections):
            name = f"restore {n}"
            yield Collection(
                id=pk,
                workspace_id=self.workspace_id,
                name=name,
                normalized_name=normalize_name(name),
                purpose="Benchmark restore",
                typical_fields=["n"],
                created_by=ACTOR,
                created_at=self.start,
                updated_at=self.start,
            )

    def _state(self, i: int) -> tuple[str, dict]:
        return f"Person {i:06d}", {"n": i, "notes": f"note {i % 97} about {i}"}

    def _records(self) -> Iterator[models.Model]:
        for i, pk in enumerate(self.ids):
            title, data = self._state(i)
            yield Record(
                id=pk,
                workspace_id=self.workspace_id,
                collection_id=self.collections[i % COLLECTIONS],
                title=title,
                data={**data, "status": "open"},
                version=2,
                created_by=ACTOR,
                created_at=self.at(i),
                updated_at=self.at(i, 1),
            )

    def _versions(self) -> Iterator[models.Model]:
        for i, pk in enumerate(self.ids):
            title, data = self._state(i)
            aliases = [f"P{i}"] if i % 10 == 0 else []
            for version, extra in ((1, {}), (2, {"status": "open"})):
                yield RecordVersion(
                    id=self.first_event + 2 * i + version,
                    record_id=pk,
                    version=version,
                    title=title,
                    data={**data, **extra},
                    aliases=aliases,
                    actor_id=ACTOR,
                    recorded_at=self.at(i, version - 1),
                )

    def _aliases(self) -> Iterator[models.Model]:
        for i in range(0, self.records, 10):
            yield RecordAlias(
                id=self.first_event + i,
                workspace_id=self.workspace_id,
                record_id=self.ids[i],
                alias=f"P{i}",
                normalized_alias=normalize_name(f"P{i}"),
                created_by=ACTOR,
                created_at=self.at(i),
            )

    def _links(self) -> Iterator[models.Model]:
        for i in range(1, self.records):
            yield Relationship(
                id=self._link_id(i),
                workspace_id=self.workspace_id,
                source_id=self.ids[i],
                relationship_type="knows",
                target_id=self.ids[i - 1],
                created_by=ACTOR,
                created_at=self.at(i, 2),
            )

    def _link_id(self, i: int) -> str:
        return str(uuid.UUID(int=(int(self.ids[i].replace("-", ""), 16) ^ 1), version=4))

    def _events(self) -> Iterator[models.Model]:
        pk = self.first_event
        for i, record in enumerate(self.ids):
            collection = self.collections[i % COLLECTIONS]
            for step, kind in ((0, "record.created"), (1, "record.updated"), (2, "link.created")):
                if kind == "link.created" and i == 0:
                    continue
                pk += 1
                yield AuditEvent(
                    id=pk,
                    workspace_id=self.workspace_id,
                    actor_id=ACTOR,
                    kind=kind,
                    entity_type="relationship" if step == 2 else "record",
                    entity_id=self._link_id(i) if step == 2 else record,
                    record_id=record,
                    collection_id=collection,
                    after={"version": min(step + 1, 2)},
                    created_at=self.at(i, step),
                )


def _timed_restore(path: Path) -> dict[str, float]:
    phases: dict[str, float] = {}
    started = time.perf_counter()
    checked = transfer.check_file(path)
    phases["check"] = time.perf_counter() - started
    transfer.import_workspace(checked, phases=phases)
    phases["total"] = time.perf_counter() - started
    return phases


def _linked_grouping_ms(workspace_id: str) -> float:
    started = time.perf_counter()
    aggregate(workspace_id=workspace_id, group_by={"linked": {}}, limit=50)
    return (time.perf_counter() - started) * 1000


def sizes_for(sizes: Sizes) -> tuple[int, int]:
    """5,000 and 50,000 records in the full run (1,000,000 search records); a tenth in --quick."""
    return sizes.records // 200, sizes.records // 20


def run(sizes: Sizes) -> list[Row]:
    figures: dict[int, dict[str, float]] = {}
    rows: list[Row] = []
    measured = sizes_for(sizes)
    with tempfile.TemporaryDirectory(prefix="anchor-restore-") as tmp:
        for n, records in enumerate(measured, start=1):
            store = Store(f"restore-{records}", records, seed=n)
            path = Path(tmp) / f"restore-{records}.jsonl"
            with open(path, "w", encoding="utf-8") as out:
                total_rows = transfer.write_export(store.workspace_id, store.tables(), out)
            figures[records] = _timed_restore(path)
            figures[records]["rows"] = total_rows
            if connection.vendor == "sqlite" and records == measured[-1]:
                rows.append(_optimize_row(store.workspace_id, records))
    small, large = measured
    for size in measured:
        phases = figures[size]
        ratio = phases["total"] / figures[small]["total"]
        rows.append(
            Row(
                AREA,
                f"restore, {size:,} records ({int(phases['rows']):,} rows)",
                phases["total"],
                "s",
                target=f"<= {TARGET_RATIO} x the {small:,}-record restore" if size == large else "",
                passed=ratio <= TARGET_RATIO if size == large else None,
                reference=figures[small]["total"] if size == large else None,
                reference_what=f"the {small:,}-record restore" if size == large else "",
                note=", ".join(
                    f"{name} {value:.2f} s"
                    for name, value in phases.items()
                    if name not in ("total", "rows")
                ),
            )
        )
    return rows


def _optimize_row(workspace_id: str, records: int) -> Row:
    """PRAGMA optimize right after a restore (which does not run it): its cost, and grouping by
    linked record before and after. Statistics an earlier restore's grouping left are dropped
    first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'")
        if cursor.fetchone():
            cursor.execute("DELETE FROM sqlite_stat1")
        cursor.execute("ANALYZE sqlite_schema")  # reloads the planner's (now empty) statistics
    without = min(_linked_grouping_ms(workspace_id) for _ in range(3))
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA optimize")
    cost = (time.perf_counter() - started) * 1000
    with_stats = min(_linked_grouping_ms(workspace_id) for _ in range(3))
    return Row(
        AREA,
        f"PRAGMA optimize after a {records:,}-record restore",
        cost,
        "ms",
        note=f"grouping by linked record {without:.0f} ms without statistics, "
        f"{with_stats:.0f} ms with them",
    )
