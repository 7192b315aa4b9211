"""Restore through the export format at two sizes, and reads on the store just restored before
the planner has statistics (docs/operations.md, Performance, describes the rows and targets)."""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat, timed
from anchor_site.devtools.benchmarks.profile import compared
from anchor_site.devtools.benchmarks.store import graph
from records import services, transfer
from records.models import Record
from records.query_bounds import QueryBound, bounded_queries
from records.selectors import aggregate, collection_history, record_history

TARGET_RATIO = 12
LINKED_TARGET = 3  # times grouping by a field
HISTORY_TARGET = 2  # times a record's history
EVENTS = 5  # alias changes of the ledger, and updates of the reference record


def build(count: int, out: Path) -> tuple[int, float]:
    """The ledger, its links and a few collection and record events, exported to `out`;
    returns (links, export seconds)."""
    ctx = data.context()
    ledger_id, ids, links = graph.build(ctx, count)
    for index in range(EVENTS):
        services.collection_alias_add(ctx=ctx, collection_id=ledger_id, alias=f"ledger {index}")
        services.record_update(
            ctx=ctx, record_id=ids[1], changes={"n": -index}, expected_version=index + 1
        )
    started = time.perf_counter()
    with out.open("w") as stream:
        transfer.export_workspace(data.WORKSPACE, stream)
    return links, time.perf_counter() - started


def restore_unanalyzed(path: Path) -> tuple[int, dict[str, float]]:
    """Restore into this empty database with autovacuum off (PostgreSQL), so nothing gathers
    statistics behind the benchmark's back; returns (rows, seconds by phase)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = current_schema() "
                "AND c.relname LIKE 'records\\_%%'"
            )
            for (table,) in cursor.fetchall():
                cursor.execute(f'ALTER TABLE "{table}" SET (autovacuum_enabled = false)')
    seconds, checked = timed(lambda: transfer.check_file(path))
    phases = {"check": seconds}
    _, rows = transfer.import_workspace(checked, phases=phases, analyze=False)
    return rows, phases


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


def measure(sizes: Sizes, count: int, links: int, restored: str) -> list[Row]:
    ledger_id = data.collection_named("bench ledger")
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
        return [Row(f"{what}aggregate grouped by linked record", None, "ms", note=note)]
    edited_id = Record.objects.get(workspace_id=data.WORKSPACE, title="Ledger entry 1").pk
    return [
        compared(
            f"{what}aggregate grouped by linked record, {links:,} links",
            sizes,
            by_linked,
            lambda: aggregate(**scope, group_by={"field": ["status"]}),
            passed=lambda ours, floor: ours < LINKED_TARGET * floor,
            target=f"< {LINKED_TARGET}x reference",
            reference_what="aggregate grouped by a field, same records",
            note=f"{restored}; {known}; first call {first:,.0f} ms; {groups:,} groups",
        ),
        compared(
            f"{what}get_collection_history of the ledger ({EVENTS + 1} own events among "
            f"{count:,} record events)",
            sizes,
            lambda: collection_history(**scope),
            lambda: record_history(workspace_id=data.WORKSPACE, record_id=edited_id),
            passed=lambda ours, floor: ours < HISTORY_TARGET * floor,
            target=f"< {HISTORY_TARGET}x reference",
            reference_what=f"get_record_history of a record with {EVENTS + 1} events",
        ),
    ]


def optimize_row(records: int) -> Row:
    """PRAGMA optimize right after a restore (which does not run it): its cost, and grouping by
    linked record without statistics and with what it gathered."""

    def grouping_ms() -> float:
        grouping = partial(aggregate, workspace_id=data.WORKSPACE, group_by={"linked": {}})
        return min(repeat(partial(grouping, limit=50), 3, warmup=0).seconds) * 1000

    without = grouping_ms()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA optimize")
    cost = (time.perf_counter() - started) * 1000
    with_stats = grouping_ms()
    return Row(
        f"PRAGMA optimize after a {records:,}-record restore",
        cost,
        "ms",
        note=f"grouping by linked record {without:.0f} ms without statistics, "
        f"{with_stats:.0f} ms with them",
    )


def run(sizes: Sizes) -> list[Row]:
    counts = (5_000, 50_000) if sizes.records >= 50_000 else (sizes.records // 10, sizes.records)
    rows: list[Row] = []
    restores: list[Row] = []
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="anchor-restore-") as name:
            tmp = Path(name)
            export = tmp / "export.jsonl"
            with data.new_database(tmp, f"source_{count}"):
                links, exported = build(count, export)
            with data.new_database(tmp, f"restored_{count}"):
                loaded, phases = restore_unanalyzed(export)
                restored = (
                    f"export {exported:.1f} s, restore of {loaded:,} rows "
                    f"{sum(phases.values()):.1f} s ({export.stat().st_size / 1e6:.0f} MB)"
                )
                reads = measure(sizes, count, links, restored)
                if connection.vendor == "sqlite" and count == counts[-1]:
                    reads.append(optimize_row(count))
                # What the restore does last, counted in its time.
                phases["statistics"], _ = timed(transfer.refresh_statistics)
        note = ", ".join(f"{phase} {seconds:.2f} s" for phase, seconds in phases.items())
        total = sum(phases.values())
        restores.append(Row(f"restore, {count:,} records ({loaded:,} rows)", total, "s", note=note))
        rows += [restores[-1], *reads]
    small, large = restores
    large.target = f"<= {TARGET_RATIO} x the {counts[0]:,}-record restore"
    large.reference, large.reference_what = small.value, f"the {counts[0]:,}-record restore"
    large.ratio = (large.value or 0) / (small.value or 1)
    large.passed = large.ratio <= TARGET_RATIO
    return rows
