"""Fewer round trips: seven reads one at a time against one batch_read, and three updates in
nine calls (resolve, prepare, commit each) against three (batch resolve, batch prepare, commit).

Both ways do the same work on the same server, alternately, so the ratio holds under load.
"""

from __future__ import annotations

import time
from typing import Any

from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes
from anchor_site.devtools.benchmarks.server import call
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


async def run(session: ClientSession, sizes: Sizes, linked: LinkedRecord) -> list[Row]:
    reads = seven_reads(linked)
    batch = {"requests": [{"operation": name, **args} for name, args in reads]}
    titles = ["Teammate 2", "Teammate 3", "Teammate 4"]
    team = linked.collection_id
    single_reads, batched_reads = Samples(), Samples()
    single_writes, batched_writes = Samples(), Samples()
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
        if round_:
            single_reads.seconds.append(middle - started)
            batched_reads.seconds.append(done - middle)
            single_writes.seconds.append(written - done)
            batched_writes.seconds.append(finished - written)
    return [
        Row(
            AREA,
            "seven reads: 1 batch_read call vs 7 single calls",
            batched_reads.median_ms,
            "ms",
            p95=batched_reads.p95_ms,
            target="faster than 7 calls",
            passed=batched_reads.median_ms < single_reads.median_ms,
            reference=single_reads.median_ms,
            reference_what="the same reads in 7 calls",
        ),
        Row(
            AREA,
            "three updates: 3 calls (batch resolve, prepare, commit) vs 9 single calls",
            batched_writes.median_ms,
            "ms",
            p95=batched_writes.p95_ms,
            target="faster than 9 calls",
            passed=batched_writes.median_ms < single_writes.median_ms,
            reference=single_writes.median_ms,
            reference_what="resolve + prepare + commit per record (9 calls)",
        ),
    ]
