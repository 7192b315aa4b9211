"""Guarded write throughput: prepare_write + commit_write of update_record from one client,
against the storage floor on the same database: durable one-row commits, one at a time (a
guarded write needs at least two: prepare stores the action, commit applies it)."""

from __future__ import annotations

import time
from functools import partial

from django.db import connection, transaction

from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import Phase, Writer, call, update_action
from workflow.mcp.client import ClientSession

TARGET_PER_S = 100


def commit_floor(count: int) -> float:
    """Durable single-row commits per second on the benchmark database."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_floor (id integer PRIMARY KEY, n integer)")
        cursor.execute("DELETE FROM bench_floor")
        cursor.execute("INSERT INTO bench_floor (id, n) VALUES (1, 0)")
    started = time.perf_counter()
    for _ in range(count):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("UPDATE bench_floor SET n = n + 1 WHERE id = 1")
    return count / (time.perf_counter() - started)


def phase(linked: LinkedRecord, sizes: Sizes, vendor: str) -> Phase:
    """The phase, with the storage floor measured first."""
    return partial(run, linked, commit_floor(sizes.writes), vendor)


async def run(
    linked: LinkedRecord,
    floor: float,
    vendor: str,
    session: ClientSession,
    writer: Writer,
    sizes: Sizes,
) -> list[Row]:
    """Guarded writes per second of one record, each citing one review, against `floor`."""
    review = await call(
        session, "resolve_record", {"query": "Teammate 5", "collection_id": linked.collection_id}
    )
    version = review["candidates"][0]["version"]

    async def write(index: int) -> None:
        action = update_action(review, {"counter": index}, version + index, "count")
        prepared = await call(session, "prepare_write", action)
        await call(session, "commit_write", {"action_id": prepared["action_id"]})

    await write(0)  # warms up
    started = time.perf_counter()
    for index in range(1, sizes.writes + 1):
        await write(index)
    rate = sizes.writes / (time.perf_counter() - started)
    durable = "synchronous=FULL" if vendor == "sqlite" else "synchronous_commit=on"
    return [
        Row(
            f"prepare + commit update_record, one client, {sizes.writes} writes ({durable})",
            rate,
            "/s",
            target=f">= {TARGET_PER_S} /s",
            passed=rate >= TARGET_PER_S,
            reference=floor,
            reference_what="durable one-row commits per second (storage floor)",
        )
    ]
