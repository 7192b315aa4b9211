"""Round trips from the official client, each against a no-op tool called alternately on the
same server (so load on the machine hits both alike).

The `stdio` area: get_record_context against the no-op. The `batches` area, fewer round trips:
seven reads one at a time against one batch_read, three updates in nine calls against three;
then the reporting batch_read and a batch resolution of 10 IDs, each against a no-op round
trip. Both ways do the same work on the same server, alternately."""

from __future__ import annotations

import itertools
import json
import time
from functools import partial
from typing import Any

from anchor_site.devtools.benchmarks.data import ACTOR, WORKSPACE, LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, timed_row
from anchor_site.devtools.benchmarks.profile import captured
from anchor_site.devtools.benchmarks.server import (
    NOOP_WHAT,
    NOTE,
    Phase,
    Writer,
    call,
    noop,
    timed_call,
    update_action,
)
from records.selectors import record_context
from workflow.batch_read import batch_read
from workflow.mcp.client import ClientSession
from workflow.scope import Scope

BATCH_SLACK = 1.1  # the batch's work against the single calls' work, as measured
WARMUP = 20  # calls of each before the stdio area's timed ones


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
    search = {"operation": "search_records", "collection_id": linked.collection_id, "limit": 20}
    engineers = [{"field": ["role"], "op": "eq", "value": "engineer"}]
    return {
        "requests": [
            {**search, "include_context": True},
            {**search, "query": "Teammate", "include_context": True},
            {**search, "where": engineers, "include_context": True},
            {"operation": "list_collections"},
            {"operation": "traverse", "start_record_id": linked.record_id, "max_nodes": 30},
        ]
    }


def batches_phase(linked: LinkedRecord, events: int) -> Phase:
    """The phase, with the reporting batch_read's SQL statements counted in this process."""
    report = partial(batch_read, Scope(WORKSPACE, ACTOR), **reporting_shape(linked))
    return partial(run, linked, events, len(captured(report)[0]))


async def run(
    linked: LinkedRecord,
    events: int,
    statements_per_call: int,
    session: ClientSession,
    writer: Writer,
    sizes: Sizes,
) -> list[Row]:
    reads = seven_reads(linked)
    batch = {"requests": [{"operation": name, **args} for name, args in reads]}
    titles = ["Teammate 2", "Teammate 3", "Teammate 4"]
    team = linked.collection_id
    # seven reads, one batch_read, nine write calls, three batch calls, a no-op round trip;
    # round 0 warms up
    phases = single_reads, batched_reads, single_writes, batched_writes, trip = [
        Samples(warmup=1) for _ in range(5)
    ]
    for round_ in range(max(3, sizes.repeat) + 1):
        marks = [time.perf_counter()]
        for name, args in reads:
            await call(session, name, args)
        marks.append(time.perf_counter())
        items = (await call(session, "batch_read", batch))["items"]
        assert all("error" not in item for item in items), items
        marks.append(time.perf_counter())
        for title in titles:
            review = await call(session, "resolve_record", {"query": title, "collection_id": team})
            prepared = await call(
                session, "prepare_write", update_action(review, {"round": round_})
            )
            await call(session, "commit_write", {"action_id": prepared["action_id"]})
        marks.append(time.perf_counter())
        requests = [{"query": title, "collection_id": team} for title in titles]
        resolved = await call(session, "batch_resolve_records", {"requests": requests})
        actions = [
            update_action(item["result"], {"round": round_ + 1000}) for item in resolved["items"]
        ]
        prepared = await call(session, "prepare_batch_write", {"actions": actions})
        await call(session, "commit_batch_write", {"action_id": prepared["action_id"]})
        marks.append(time.perf_counter())
        laps = [b - a for a, b in itertools.pairwise(marks)] + [await noop(session)]
        for samples, seconds in zip(phases, laps, strict=True):
            samples.add(seconds)
    report = reporting_shape(linked)
    ids = {"requests": [{"query": i} for i in [linked.record_id, *linked.neighbour_ids][:10]]}
    reporting, resolving, noops = (Samples(warmup=1) for _ in range(3))  # round 0 warms up
    for _ in range(max(5, sizes.repeat * 2) + 1):
        await writer.write(linked.collection_id)
        reporting.add(await timed_call(session, "batch_read", report))
        resolving.add(await timed_call(session, "batch_resolve_records", ids))
        noops.add(await noop(session))
    return [
        timed_row(
            "batch_read, reporting shape (3 searches of 20 with contexts, a list, a traverse), "
            f"{events:,} audit events, fresh server",
            reporting,
            under_ms=50,
            reference=noops.median_ms,
            reference_what=NOOP_WHAT,
            note=f"{statements_per_call} SQL statements; {NOTE}",
        ),
        timed_row(
            f"batch_resolve_records, 10 record IDs, {events:,} audit events, fresh server",
            resolving,
            under_ms=15,
            reference=noops.median_ms,
            reference_what=NOOP_WHAT,
            note=NOTE,
        ),
        saved_row("seven reads: 1 batch_read call", batched_reads, single_reads, trip, "7 calls"),
        saved_row("three updates: 3 calls", batched_writes, single_writes, trip, "9 calls"),
    ]


def saved_row(what: str, batched: Samples, single: Samples, trip: Samples, what_single: str) -> Row:
    """A batch saves round trips, so it is faster than single calls by construction; what can
    fail is the work: the batch may cost no more than the single calls less the six no-op
    round trips it saves (measured in the same rounds)."""
    work = single.median_ms - 6 * trip.median_ms
    return timed_row(
        f"{what}, against the single calls less 6 round trips",
        batched,
        target=f"<= {BATCH_SLACK}x the single calls' work",
        passed=work > 0 and batched.median_ms <= BATCH_SLACK * work,
        reference=work if work > 0 else None,
        reference_what=f"the same in {what_single} ({single.median_ms:.1f} ms) less 6 no-op "
        f"round trips ({trip.median_ms:.2f} ms each, same rounds)",
    )


def stdio_phase(linked: LinkedRecord, events: int) -> Phase:
    arguments = {"record_id": linked.record_id, "relationship_limit": 20, "event_limit": 10}
    # The measured call's SQL statements, run in this process.
    statements, _ = captured(partial(record_context, workspace_id=WORKSPACE, **arguments))

    async def run(session: ClientSession, writer: Writer, sizes: Sizes) -> list[Row]:
        first = await call(session, "get_record_context", arguments)
        for _ in range(WARMUP):
            await call(session, "get_record_context", arguments)
            await noop(session)
        context, noops = Samples(), Samples()
        for _ in range(sizes.calls):
            await writer.write(linked.collection_id)
            context.add(await timed_call(session, "get_record_context", arguments))
            noops.add(await noop(session))
        size = len(json.dumps(first, ensure_ascii=False).encode())
        links = sum(len(first["links"][k]) for k in ("outgoing", "incoming"))
        return [
            timed_row(
                f"stdio round trip, get_record_context ({links} links, "
                f"{len(first['events'] or [])} events), {sizes.calls:,} calls, {events:,} audit "
                "events, fresh server",
                context,
                at_most=(1.5, noops, "no-op"),
                reference_what=NOOP_WHAT,
                note=f"reply {size / 1024:.1f} KiB, {len(statements)} SQL statements; {NOTE}",
            )
        ]

    return run
