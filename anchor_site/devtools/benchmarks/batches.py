"""Fewer round trips: seven reads one at a time against one batch_read, and three updates in
nine calls (resolve, prepare, commit each) against three (batch resolve, batch prepare, commit).
Then the two batch shapes an agent uses most, each against a no-op round trip: the spec's
reporting read (three searches of 20 with include_context, a list, a traverse) and a batch
resolution of 10 record IDs.

Both ways do the same work on the same server, alternately, so the ratio holds under load.
The two shapes are measured on the long history (history.build) with another server making a
guarded create in the collection they read before each round (writer.Writer).
"""

from __future__ import annotations

import time
from typing import Any

from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, statements
from anchor_site.devtools.benchmarks.server import call
from anchor_site.devtools.benchmarks.writer import NOTE, Writer
from workflow.mcp.client import ClientSession

AREA = "batches"


def seven_reads(linked: LinkedRecord) -> list[tuple[str, dict[str, Any]]]:
    team, hub, others = linked.collection_id, linked.record_id, linked.neighbour_ids
    return [
        ("list_collections", {}),
        ("search_records", {"collection_id": team, "limit": 10}),
        ("search_records", {"collection_id": team, "query": "Teammate 1", "limit": 10}),
        ("get_record_context", {"record_id": hub, "event_limit": 10}),
        ("get_record_context", {"record_id": others[0], "event_limit": 10}),
        ("get_record_context", {"record_id": others[1], "event_limit": 10}),
        ("traverse", {"start_record_id": hub, "max_nodes": 30}),
    ]


def reporting_shape(linked: LinkedRecord) -> dict[str, Any]:
    team = linked.collection_id
    search = {"operation": "search_records", "collection_id": team, "limit": 20}
    return {
        "requests": [
            {**search, "include_context": True},
            {**search, "query": "Teammate", "include_context": True},
            {
                **search,
                "where": [{"field": ["role"], "op": "eq", "value": "engineer"}],
                "include_context": True,
            },
            {"operation": "list_collections"},
            {"operation": "traverse", "start_record_id": linked.record_id, "max_nodes": 30},
        ]
    }


async def timed(session: ClientSession, name: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    await call(session, name, args)
    return time.perf_counter() - started


def _selected(resolution: dict[str, Any]) -> tuple[str, str, int]:
    chosen = resolution["selected_record_id"]
    version = next(c["version"] for c in resolution["candidates"] if c["record_id"] == chosen)
    return resolution["resolution_id"], chosen, version


def _update(record_id: str, version: int, review_id: str, round_: int) -> dict[str, Any]:
    return {
        "operation": "update_record",
        "arguments": {
            "record_id": record_id,
            "changes": {"round": round_},
            "expected_version": version,
        },
        "review_ids": [review_id],
        "decision_reason": "benchmark: record the round",
    }


def reporting_statements(linked: LinkedRecord) -> int:
    """SQL statements of the reporting batch_read, run in this process."""
    from anchor_site.devtools.benchmarks.data import ACTOR, WORKSPACE
    from workflow.batch_read import batch_read
    from workflow.scope import Scope

    scope = Scope(WORKSPACE, ACTOR)
    return statements(lambda: batch_read(scope, **reporting_shape(linked)))


async def run(
    session: ClientSession,
    writer: Writer,
    sizes: Sizes,
    linked: LinkedRecord,
    events: int,
    statements_per_call: int,
) -> list[Row]:
    reads = seven_reads(linked)
    batch = {"requests": [{"operation": name, **args} for name, args in reads]}
    titles = ["Teammate 2", "Teammate 3", "Teammate 4"]
    team = linked.collection_id
    single_reads, batched_reads = Samples(), Samples()
    single_writes, batched_writes = Samples(), Samples()
    trip = Samples()  # one no-op round trip, timed in the same rounds
    rounds = max(3, sizes.repeat)
    for round_ in range(rounds + 1):  # round 0 warms up
        started = time.perf_counter()
        for name, args in reads:
            await call(session, name, args)
        middle = time.perf_counter()
        items = (await call(session, "batch_read", batch))["items"]
        assert all(item["ok"] for item in items), items
        done = time.perf_counter()

        for title in titles:
            review = await call(session, "resolve_record", {"query": title, "collection_id": team})
            review_id, record_id, version = _selected(review)
            prepared = await call(
                session, "prepare_write", _update(record_id, version, review_id, round_)
            )
            await call(session, "commit_write", {"action_id": prepared["action_id"]})
        written = time.perf_counter()
        resolved = await call(
            session,
            "batch_resolve_records",
            {"requests": [{"query": t, "collection_id": team} for t in titles]},
        )
        actions = [
            _update(*_selected(item["result"])[1:], _selected(item["result"])[0], round_ + 1000)
            for item in resolved["items"]
        ]
        prepared = await call(session, "prepare_batch_write", {"actions": actions})
        await call(session, "commit_batch_write", {"action_id": prepared["action_id"]})
        finished = time.perf_counter()
        spent_trip = await timed(session, "get_server_instructions", {})
        if round_:
            trip.seconds.append(spent_trip)
            single_reads.seconds.append(middle - started)
            batched_reads.seconds.append(done - middle)
            single_writes.seconds.append(written - done)
            batched_writes.seconds.append(finished - written)
    report = reporting_shape(linked)
    ids = {"requests": [{"query": i} for i in [linked.record_id, *linked.neighbour_ids][:10]]}
    reporting, resolving, noop = Samples(), Samples(), Samples()
    for round_ in range(max(5, sizes.repeat * 2) + 1):
        await writer.write(linked.collection_id)
        spent = (
            await timed(session, "batch_read", report),
            await timed(session, "batch_resolve_records", ids),
            await timed(session, "get_server_instructions", {}),
        )
        if round_:  # round 0 warms up
            reporting.seconds.append(spent[0])
            resolving.seconds.append(spent[1])
            noop.seconds.append(spent[2])
    return [
        Row(
            AREA,
            "batch_read, reporting shape (3 searches of 20 with contexts, a list, a traverse), "
            f"{events:,} audit events, fresh server",
            reporting.median_ms,
            "ms",
            p95=reporting.p95_ms,
            target="< 50 ms",
            passed=reporting.median_ms < 50,
            reference=noop.median_ms,
            reference_what="get_server_instructions (no-op) on the same server",
            note=f"{statements_per_call} SQL statements; {NOTE}",
        ),
        Row(
            AREA,
            f"batch_resolve_records, 10 record IDs, {events:,} audit events, fresh server",
            resolving.median_ms,
            "ms",
            p95=resolving.p95_ms,
            target="< 15 ms",
            passed=resolving.median_ms < 15,
            reference=noop.median_ms,
            reference_what="get_server_instructions (no-op) on the same server",
            note=NOTE,
        ),
        # A batch saves round trips, so it is faster than single calls by construction; what
        # can fail is the work: the batch may cost no more than the single calls less the
        # round trips it saves (six no-op trips, measured in the same rounds).
        saved_row(
            "seven reads: 1 batch_read call",
            batched_reads,
            single_reads,
            trip,
            saved=6,
            what_single="the same reads in 7 calls",
        ),
        saved_row(
            "three updates: 3 calls (batch resolve, prepare, commit)",
            batched_writes,
            single_writes,
            trip,
            saved=6,
            what_single="resolve + prepare + commit per record (9 calls)",
        ),
    ]


BATCH_SLACK = 1.1  # the batch's work against the single calls' work, as measured


def saved_row(
    what: str, batched: Samples, single: Samples, trip: Samples, *, saved: int, what_single: str
) -> Row:
    """`batched` against `single` less `saved` no-op round trips: the same work, no trips."""
    work = single.median_ms - saved * trip.median_ms
    return Row(
        AREA,
        f"{what}, against the single calls less {saved} round trips",
        batched.median_ms,
        "ms",
        p95=batched.p95_ms,
        target=f"<= {BATCH_SLACK}x the single calls' work",
        passed=work > 0 and batched.median_ms <= BATCH_SLACK * work,
        reference=work if work > 0 else None,
        reference_what=f"{what_single} ({single.median_ms:.1f} ms) less {saved} no-op round "
        f"trips ({trip.median_ms:.2f} ms each, same rounds)",
    )
