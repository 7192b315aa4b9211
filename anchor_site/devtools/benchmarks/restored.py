"""Reads on a store just restored from an export, before the planner has statistics.

A restore loads every row into new tables; PostgreSQL's planner then has no statistics until
ANALYZE (or autovacuum) runs, and SQLite has no sqlite_stat1 at all. Plans must not depend on
them. Per size (5,000 and 50,000 records, at most --records), a ledger with links
(graph.ledger, graph._links) is built in a database of its own, exported with
records.transfer, and restored into another new database with autovacuum off on PostgreSQL;
then, with no ANALYZE, in one run:

- grouping the ledger by linked record, against grouping it by a field (target: within 3x);
- the ledger collection's history (its own few events among one per record), against a
  record's history (target: within 2x: flat, whatever the collection's records did).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, connection

from anchor_site.devtools.benchmarks import data, graph, sql_profile
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from records import services, transfer
from records.models import Collection, Record
from records.query_bounds import QueryBound, bounded_queries
from records.selectors import aggregate, collection_history, record_history

AREA = "restored"
LEDGER = "bench ledger"
SIZES = (5_000, 50_000)
LINKED_TARGET = 3  # times grouping by a field
HISTORY_TARGET = 2  # times a record's history
COLLECTION_EVENTS = 5  # alias changes after the records: the collection's own newest events
RECORD_EVENTS = 5  # updates of the record whose history is the reference


@contextlib.contextmanager
def new_database(tmp: Path, name: str) -> Iterator[None]:
    """The default connection pointed at a new, migrated database for the block's length."""
    database = connection.settings_dict
    saved = database["NAME"]
    scratch = None
    connection.close()
    if connection.vendor == "sqlite":
        database["NAME"] = str(tmp / f"{name}.db")
    else:
        from anchor_site.devtools.benchmarks.scratch import ScratchDatabase

        scratch = ScratchDatabase(os.environ["DATABASE_URL"])
        scratch.name = f"{saved}_{name}"[:63]
        scratch.create()
        database["NAME"] = scratch.name
    try:
        call_command("migrate", interactive=False, verbosity=0)
        yield
    finally:
        connection.close()
        database["NAME"] = saved
        if scratch is not None:
            scratch.drop()


def build(count: int, out: Path) -> tuple[int, float]:
    """The ledger, its links and a few collection and record events, exported to `out`;
    returns (links, export seconds)."""
    ctx = data.context()
    ledger_id = data.collection(ctx, LEDGER).pk
    data.bulk_insert(ledger_id, iter(graph.ledger(count)))
    ids = list(
        Record.objects.filter(collection_id=ledger_id)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )
    links = graph._links(ids)
    graph._insert_links(links)
    for index in range(COLLECTION_EVENTS):
        services.collection_alias_add(ctx=ctx, collection_id=ledger_id, alias=f"ledger {index}")
    for index in range(RECORD_EVENTS):
        services.record_update(
            ctx=ctx, record_id=ids[1], changes={"n": -index}, expected_version=index + 1
        )
    started = time.perf_counter()
    with out.open("w") as stream:
        transfer.export_workspace(data.WORKSPACE, stream)
    return len(links), time.perf_counter() - started


def restore(path: Path) -> tuple[int, float]:
    """Restore the export into this empty database, autovacuum off (PostgreSQL) so nothing
    gathers statistics behind the benchmark's back; returns (rows, seconds)."""
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
    what: str, sizes: Sizes, call: Any, reference: Any, reference_what: str, target: int, note: str
) -> Row:
    times = max(3, sizes.reference_repeat * 2)
    ours = repeat(call, times)
    floor = repeat(reference, times)
    ratio = ours.median_ms / floor.median_ms if floor.median_ms else None
    row = Row(
        AREA,
        what,
        ours.median_ms,
        "ms",
        p95=ours.p95_ms,
        target=f"< {target}x reference",
        passed=ratio is not None and ratio < target,
        reference=floor.median_ms,
        reference_what=reference_what,
        note=note,
    )
    return sql_profile.explained(row, sizes, call)


def measure(sizes: Sizes, count: int, links: int, restored: str) -> list[Row]:
    ledger_id = Collection.objects.get(workspace_id=data.WORKSPACE, name=LEDGER).pk
    known = statistics()  # before the first timed call: what the plans had to go on

    def by_linked() -> dict[str, Any]:
        return aggregate(
            workspace_id=data.WORKSPACE, collection_id=ledger_id, group_by={"linked": {}}
        )

    def by_field() -> dict[str, Any]:
        return aggregate(
            workspace_id=data.WORKSPACE, collection_id=ledger_id, group_by={"field": ["status"]}
        )

    try:
        first, linked = _first_call(by_linked)
    except DatabaseError as exc:  # past the query bound: what a client would get
        what = f"restored {count:,} records, no ANALYZE: aggregate grouped by linked record"
        return [Row(AREA, what, None, "ms", note=f"{restored}; {known}; first call: {exc}")]
    edited_id = Record.objects.get(workspace_id=data.WORKSPACE, title="Ledger entry 1").pk
    rows = [
        _ratio_row(
            f"restored {count:,} records, no ANALYZE: aggregate grouped by linked record, "
            f"{links:,} links",
            sizes,
            by_linked,
            by_field,
            "aggregate grouped by a field, same records",
            LINKED_TARGET,
            f"{restored}; {known}; first call {first:,.0f} ms; {linked['group_count']:,} groups",
        ),
        _ratio_row(
            f"restored {count:,} records, no ANALYZE: get_collection_history of the ledger "
            f"({COLLECTION_EVENTS + 1} own events among {count:,} record events)",
            sizes,
            lambda: collection_history(workspace_id=data.WORKSPACE, collection_id=ledger_id),
            lambda: record_history(workspace_id=data.WORKSPACE, record_id=edited_id),
            f"get_record_history of a record with {RECORD_EVENTS + 1} events",
            HISTORY_TARGET,
            "",
        ),
    ]
    return rows


def _first_call(call: Any) -> tuple[float, Any]:
    """The first call, within the bound a client's call has (ANCHOR_QUERY_TIMEOUT_S)."""
    started = time.perf_counter()
    with bounded_queries(QueryBound(settings.ANCHOR_QUERY_TIMEOUT_S)):
        result = call()
    return (time.perf_counter() - started) * 1000, result


def run(sizes: Sizes) -> list[Row]:
    rows = []
    for count in [n for n in SIZES if n <= sizes.records] or [sizes.records]:
        with tempfile.TemporaryDirectory(prefix="anchor-restored-") as name:
            tmp = Path(name)
            export = tmp / "export.jsonl"
            with new_database(tmp, f"source_{count}"):
                links, exported = build(count, export)
            with new_database(tmp, f"restored_{count}"):
                loaded, seconds = restore(export)
                restored = (
                    f"export {exported:.1f} s, restore of {loaded:,} rows {seconds:.1f} s "
                    f"({export.stat().st_size / 1e6:.0f} MB)"
                )
                rows += measure(sizes, count, links, restored)
    return rows
