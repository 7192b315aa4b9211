"""Writes that lock the same records at once, in process, on connections of their own, in a
store of `--records` records (at most 50,000) restored from an export (restored_store):

- opposite-order batches: each round, two threads apply batches of link_records over the same
  RECORDS records, one naming them forwards and the other backwards, let go together; the
  deadlocks counted (target 0) and a contended batch's median time against one batch alone;
- a commit kept waiting on a row lock held by another connection past a small query limit:
  the error it gets (target STORAGE_ERROR, cause "locked", not QUERY_TIMEOUT) and how long it
  waited against the limit.
"""

from __future__ import annotations

import functools
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.test import override_settings

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, timed
from anchor_site.devtools.benchmarks.server import update_action
from anchor_site.devtools.benchmarks.store.generated import Store
from records import transfer
from records.errors import AnchorError
from records.models import Record
from records.query_bounds import QueryBound, bounded_queries
from workflow import actions
from workflow.actions import commit_write, prepare_batch_write, prepare_write
from workflow.mcp.envelope import run_tool
from workflow.models import PreparedAction
from workflow.resolution import batch_resolve, resolve_record
from workflow.scope import Scope

STORE = 50_000  # records in the store, at most: the issue asks for 5,000 and 50,000
RECORDS = 10  # records both batches name
ROUNDS = 20
QUICK_ROUNDS = 5
CONTENDED_RATIO = 3  # two batches over the same records may cost this many batches alone
LIMIT_S = 0.5  # the query limit of the blocked write


@functools.cache
def restored_store(records: int) -> tuple[Store, str]:
    """A workspace of `records` records as a team's store would come: the rows of
    store.generated.Store written in the export format and restored with import_workspace,
    statistics refreshed as a restore leaves them. Built once per run, for the areas that work
    in a store (locks, agendas); returns the store and a note of what its restore took."""
    store = Store(f"bench-store-{records}", records, seed=45)  # IDs no other area uses
    with tempfile.TemporaryDirectory(prefix="anchor-store-") as tmp:
        path = Path(tmp) / "store.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            rows = transfer.write_export(store.workspace_id, store.tables(), out)
        seconds, _ = timed(lambda: transfer.import_workspace(transfer.check_file(path)))
    return (
        store,
        f"store of {records:,} records restored from an export ({rows:,} rows, {seconds:.1f} s)",
    )


def _batch(scope: Scope, sources: list[str], target: str, kind: str) -> str:
    named = [*sources, target]
    ids = [
        item["result"]["resolution_id"]
        for start in range(0, len(named), 10)  # batch_resolve takes 10 requests a call
        for item in batch_resolve(
            scope, requests=[{"query": pk} for pk in named[start : start + 10]]
        )["items"]
    ]
    items = [
        {
            "operation": "link_records",
            "arguments": {"source_id": pk, "relationship_type": kind, "target_id": target},
            "review_ids": ids,
            "decision_reason": "benchmark: lock order",
        }
        for pk in sources
    ]
    return str(prepare_batch_write(scope, actions=items)["action_id"])


def _apply(action_id: str) -> float:
    """The batch's writes, as its commit applies them once its checks have passed (a commit's
    counter locks would serialise two batches before they reach a record)."""
    started = time.perf_counter()
    with transaction.atomic():
        actions._apply(PreparedAction.objects.get(pk=action_id))
    return time.perf_counter() - started


def _is_deadlock(exc: BaseException) -> bool:
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlstate", None) == "40P01" or "deadlock" in str(exc).lower()


def _together(action_ids: list[str]) -> list[Any]:
    """Each batch applied on a thread of its own, released together; its time or its error."""
    gate = threading.Barrier(len(action_ids))

    def run(action_id: str) -> Any:
        try:
            gate.wait()
            return _apply(action_id)
        except (AnchorError, DatabaseError) as exc:
            return exc
        finally:
            connection.close()

    with ThreadPoolExecutor(len(action_ids)) as pool:
        return list(pool.map(run, action_ids))


def _opposite_orders(scope: Scope, pks: list[str], rounds: int, store: str) -> Row:
    sources, targets = pks[:RECORDS], pks[RECORDS:]
    alone, contended = Samples(), Samples()
    deadlocks, errors = 0, []
    for round_ in range(rounds):
        solo = _batch(scope, sources, targets[0], f"solo_{round_}")
        forwards = _batch(scope, sources, targets[1], f"forwards_{round_}")
        backwards = _batch(scope, sources[::-1], targets[2], f"backwards_{round_}")
        alone.seconds.append(_apply(solo))
        for outcome in _together([forwards, backwards]):
            if isinstance(outcome, float):
                contended.seconds.append(outcome)
            else:
                deadlocks += _is_deadlock(outcome)
                errors.append(f"{type(outcome).__name__}: {outcome}"[:120])
    ratio = contended.median_ms / alone.median_ms if contended.seconds else None
    vendor_note = (
        "row locks taken by ID"
        if connection.vendor == "postgresql"
        else "one writer at a time: no deadlock possible"
    )
    failed = len(errors) - deadlocks
    return Row(
        f"opposite-order batches of {RECORDS} link_records, {rounds} rounds: deadlocks",
        deadlocks,
        "",
        target=f"0, contended p50 <= {CONTENDED_RATIO}x alone",
        passed=deadlocks == 0 and not errors and ratio is not None and ratio <= CONTENDED_RATIO,
        reference=alone.median_ms,
        reference_what="p50 ms of one batch alone",
        ratio=ratio,
        note=(
            f"contended p50 {contended.median_ms if contended.seconds else 0:.1f} ms; "
            f"{store}; {vendor_note}"
            + (f"; {failed} other error(s): {errors[0]}" if failed else "")
        ),
    )


def _hold_lock(record_id: str) -> Any:
    """Another connection holding the record's row (PostgreSQL) or the write lock (SQLite)."""
    holder = connection.get_new_connection(connection.get_connection_params())
    if connection.vendor == "postgresql":
        holder.execute("SELECT 1 FROM records_record WHERE id = %s FOR UPDATE", [record_id])
    else:
        holder.execute("BEGIN IMMEDIATE")
    return holder


def _blocked_write(scope: Scope, record_id: str, store: str) -> Row:
    # A new connection: one older than CONN_MAX_AGE (a run on a loaded machine passes it) is
    # replaced inside the timed call (run_tool closes old connections), and the new one would
    # lack SQLite's shortened busy timeout set below.
    connection.close()
    collection_id = Record.objects.get(pk=record_id).collection_id
    review = resolve_record(scope, query=record_id, collection_id=collection_id)
    prepared = prepare_write(scope, **update_action(review, {"status": "held"}, why="lock wait"))
    holder = _hold_lock(record_id)
    sqlite = connection.vendor == "sqlite"
    if sqlite:
        # SQLite waits its busy timeout (the server's is 60 s), not the query limit: shortened
        # to the limit here, so the row shows the answer without a minute's wait.
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(LIMIT_S * 1000)}")
    try:
        with override_settings(ANCHOR_QUERY_TIMEOUT_S=LIMIT_S):
            started = time.perf_counter()
            with bounded_queries(QueryBound(timeout_s=LIMIT_S)):
                envelope = run_tool(lambda: commit_write(scope, action_id=prepared["action_id"]))
            waited = time.perf_counter() - started
    finally:
        holder.rollback()
        holder.close()
        if sqlite:
            connection.close()  # the next connection takes the configured busy timeout
    error: dict[str, Any] = dict(envelope.get("error") or {})
    got = f"{error.get('code', 'ok')} {(error.get('details') or {}).get('cause', '')}".strip()
    return Row(
        "write blocked past its lock limit: time to its error",
        waited * 1000,
        "ms",
        target="storage error (locked), within the limit",
        passed=got == "STORAGE_ERROR locked" and waited <= LIMIT_S * 2,
        reference=LIMIT_S * 1000,
        reference_what="ANCHOR_QUERY_TIMEOUT_S",
        note=f"got {got.lower()}; {store}"
        + ("; SQLite's busy timeout set to the limit for this row" if sqlite else ""),
    )


def run(sizes: Sizes) -> list[Row]:
    store, built = restored_store(min(sizes.records, STORE))
    scope = Scope(store.workspace_id, data.ACTOR)
    pks = list(
        Record.objects.filter(collection_id=store.collections[0])
        .order_by("?")
        .values_list("pk", flat=True)[: RECORDS + 4]
    )
    rounds = ROUNDS if sizes.repeat >= 20 else QUICK_ROUNDS
    return [
        _opposite_orders(scope, pks, rounds, built),
        _blocked_write(scope, pks[-1], built),
    ]
