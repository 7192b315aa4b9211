"""Restore from the export format at two sizes, and reads on a store just restored.

`restore`: stores of 5,000 and 50,000 records (a tenth with --quick), each written by the
export's own writer from rows made in memory (two versions and two events a record, a link to
the record before it, an alias on every tenth, five collections), restored as a new workspace
with its phases timed; the larger against the smaller (target: linear, at most 12 times). On
SQLite a row says what `PRAGMA optimize` costs after the restore and what it changes.

`restored`: a ledger with links (graph.py) exported and restored into a new database with no
ANALYZE (autovacuum off on PostgreSQL), so the planner has no statistics; then grouping by
linked record against grouping by a field (within 3x), and the ledger's own few events among
one per record against a record's history (within 2x).
"""

from __future__ import annotations

import random
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, models

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from anchor_site.devtools.benchmarks.profile import explained
from anchor_site.devtools.benchmarks.store import graph
from records import services, transfer
from records.models import (
    AuditEvent,
    Collection,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
)
from records.names import normalize_name
from records.query_bounds import QueryBound, bounded_queries
from records.selectors import aggregate, collection_history, record_history

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


def _linked_grouping_ms(workspace_id: str) -> float:
    started = time.perf_counter()
    aggregate(workspace_id=workspace_id, group_by={"linked": {}}, limit=50)
    return (time.perf_counter() - started) * 1000


def run(sizes: Sizes) -> list[Row]:
    small, large = sizes.records // 200, sizes.records // 20  # 5,000 and 50,000 in a full run
    figures: dict[int, dict[str, float]] = {}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="anchor-restore-") as tmp:
        for seed, records in enumerate((small, large), start=1):
            store = Store(f"restore-{records}", records, seed=seed)
            path = Path(tmp) / f"restore-{records}.jsonl"
            with open(path, "w", encoding="utf-8") as out:
                written = transfer.write_export(store.workspace_id, store.tables(), out)
            started = time.perf_counter()
            checked = transfer.check_file(path)
            phases = {"check": time.perf_counter() - started}
            transfer.import_workspace(checked, phases=phases)
            figures[records] = {**phases, "total": time.perf_counter() - started}
            note = ", ".join(f"{name} {value:.2f} s" for name, value in phases.items())
            rows.append(
                Row(
                    AREA,
                    f"restore, {records:,} records ({written:,} rows)",
                    figures[records]["total"],
                    "s",
                    note=note,
                )
            )
        if connection.vendor == "sqlite":
            rows.insert(0, _optimize_row(store.workspace_id, large))
    ratio = figures[large]["total"] / figures[small]["total"]
    rows[-1].target = f"<= {TARGET_RATIO} x the {small:,}-record restore"
    rows[-1].passed = ratio <= TARGET_RATIO
    rows[-1].reference, rows[-1].ratio = figures[small]["total"], ratio
    rows[-1].reference_what = f"the {small:,}-record restore"
    return rows


def _optimize_row(workspace_id: str, records: int) -> Row:
    """PRAGMA optimize right after a restore (which does not run it): its cost, and grouping by
    linked record before and after, statistics an earlier restore's grouping left dropped."""
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


# --- reads on a store just restored ---------------------------------------------------------------

RESTORED = "restored"
LEDGER = "bench ledger"
LINKED_TARGET = 3  # times grouping by a field
HISTORY_TARGET = 2  # times a record's history
EVENTS = 5  # alias changes of the ledger, and updates of the reference record


def build(count: int, out: Path) -> tuple[int, float]:
    """The ledger, its links and a few collection and record events, exported to `out`;
    returns (links, export seconds)."""
    ctx = data.context()
    ledger_id = data.collection(ctx, LEDGER).pk
    data.bulk_insert(ledger_id, graph.ledger(count))
    ids = list(
        Record.objects.filter(collection_id=ledger_id)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )
    links = graph.links(ids)
    graph.insert_links(links)
    for index in range(EVENTS):
        services.collection_alias_add(ctx=ctx, collection_id=ledger_id, alias=f"ledger {index}")
        services.record_update(
            ctx=ctx, record_id=ids[1], changes={"n": -index}, expected_version=index + 1
        )
    started = time.perf_counter()
    with out.open("w") as stream:
        transfer.export_workspace(data.WORKSPACE, stream)
    return len(links), time.perf_counter() - started


def restore_unanalyzed(path: Path) -> tuple[int, float]:
    """Restore into this empty database with autovacuum off (PostgreSQL), so nothing gathers
    statistics behind the benchmark's back; returns (rows, seconds)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = current_schema() "
                "AND c.relname LIKE 'records\\_%%'"
            )
            for (table,) in cursor.fetchall():
                cursor.execute(f'ALTER TABLE "{table}" SET (autovacuum_enabled = false)')
    started = time.perf_counter()
    _, rows = transfer.import_workspace(transfer.check_file(path), analyze=False)
    return rows, time.perf_counter() - started


def statistics() -> str:
    """What the planner knows of the restored tables: nothing, if no ANALYZE ran."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
            if not cursor.fetchone()[0]:
                return "no sqlite_stat1"
            cursor.execute("SELECT count(*) FROM sqlite_stat1")
            return f"sqlite_stat1 has {cursor.fetchone()[0]} rows"
        cursor.execute(
            "SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
            "AND tablename LIKE 'records\\_%%'"
        )
        return f"{cursor.fetchone()[0]} pg_stats rows on the records tables"


def _ratio_row(
    what: str,
    sizes: Sizes,
    calls: tuple[Callable[[], Any], Callable[[], Any]],
    reference_what: str,
    target: int,
    note: str,
) -> Row:
    times = max(3, sizes.reference_repeat * 2)
    ours, floor = repeat(calls[0], times), repeat(calls[1], times)
    row = Row(
        RESTORED,
        what,
        ours.median_ms,
        "ms",
        p95=ours.p95_ms,
        target=f"< {target}x reference",
        passed=bool(floor.median_ms) and ours.median_ms < target * floor.median_ms,
        reference=floor.median_ms,
        reference_what=reference_what,
        note=note,
    )
    return explained(row, sizes, calls[0])


def measure(sizes: Sizes, count: int, links: int, restored: str) -> list[Row]:
    ledger_id = data.collection_named(LEDGER)
    known = statistics()  # before the first timed call: what the plans had to go on
    scope = {"workspace_id": data.WORKSPACE, "collection_id": ledger_id}
    what = f"restored {count:,} records, no ANALYZE: "

    def by_linked() -> dict[str, Any]:
        return aggregate(**scope, group_by={"linked": {}})

    try:  # the first call, within the bound a client's call has
        started = time.perf_counter()
        with bounded_queries(QueryBound(settings.ANCHOR_QUERY_TIMEOUT_S)):
            groups = by_linked()["group_count"]
        first = (time.perf_counter() - started) * 1000
    except DatabaseError as exc:  # past the query bound: what a client would get
        note = f"{restored}; {known}; first call: {exc}"
        return [Row(RESTORED, f"{what}aggregate grouped by linked record", None, "ms", note=note)]
    edited_id = Record.objects.get(workspace_id=data.WORKSPACE, title="Ledger entry 1").pk
    return [
        _ratio_row(
            f"{what}aggregate grouped by linked record, {links:,} links",
            sizes,
            (by_linked, lambda: aggregate(**scope, group_by={"field": ["status"]})),
            "aggregate grouped by a field, same records",
            LINKED_TARGET,
            f"{restored}; {known}; first call {first:,.0f} ms; {groups:,} groups",
        ),
        _ratio_row(
            f"{what}get_collection_history of the ledger ({EVENTS + 1} own events among "
            f"{count:,} record events)",
            sizes,
            (
                lambda: collection_history(**scope),
                lambda: record_history(workspace_id=data.WORKSPACE, record_id=edited_id),
            ),
            f"get_record_history of a record with {EVENTS + 1} events",
            HISTORY_TARGET,
            "",
        ),
    ]


def restored_rows(sizes: Sizes) -> list[Row]:
    rows = []
    for count in [n for n in (5_000, 50_000) if n <= sizes.records] or [sizes.records]:
        with tempfile.TemporaryDirectory(prefix="anchor-restored-") as name:
            tmp = Path(name)
            export = tmp / "export.jsonl"
            with data.new_database(tmp, f"source_{count}"):
                links, exported = build(count, export)
            with data.new_database(tmp, f"restored_{count}"):
                loaded, seconds = restore_unanalyzed(export)
                restored = (
                    f"export {exported:.1f} s, restore of {loaded:,} rows {seconds:.1f} s "
                    f"({export.stat().st_size / 1e6:.0f} MB)"
                )
                rows += measure(sizes, count, links, restored)
    return rows
