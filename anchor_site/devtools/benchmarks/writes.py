"""Guarded write throughput: prepare_write + commit_write of update_record from one client.

The reference is the storage floor measured on the same database in the same run: a one-row
UPDATE committed durably (SQLite synchronous=FULL, PostgreSQL's default synchronous_commit),
one transaction at a time. A guarded write needs at least two such commits (prepare stores the
action, commit applies it).
"""

from __future__ import annotations

import time

from django.db import connection, transaction

from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import call
from workflow.mcp.client import ClientSession

AREA = "writes"
FLOOR_TABLE = "anchor_bench_commit_floor"


def commit_floor(count: int) -> float:
    """Durable single-row commits per second on the benchmark database."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {FLOOR_TABLE} (id integer PRIMARY KEY, n integer)"
        )
        cursor.execute(f"DELETE FROM {FLOOR_TABLE}")
        cursor.execute(f"INSERT INTO {FLOOR_TABLE} (id, n) VALUES (1, 0)")
    started = time.perf_counter()
    for _ in range(count):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE {FLOOR_TABLE} SET n = n + 1 WHERE id = 1")
    return count / (time.perf_counter() - started)


async def run(session: ClientSession, sizes: Sizes, linked: LinkedRecord) -> tuple[float, str]:
    """(guarded writes per second, what was written); the caller adds the floor."""
    title = "Teammate 5"
    review = await call(
        session, "resolve_record", {"query": title, "collection_id": linked.collection_id}
    )
    record_id = review["selected_record_id"]
    version = next(c["version"] for c in review["candidates"] if c["record_id"] == record_id)
    review_ids = [review["resolution_id"]]

    async def one(index: int) -> None:
        prepared = await call(
            session,
            "prepare_write",
            {
                "operation": "update_record",
                "arguments": {
                    "record_id": record_id,
                    "changes": {"counter": index},
                    "expected_version": version + index,
                },
                "review_ids": review_ids,
                "decision_reason": "benchmark: count",
            },
        )
        await call(session, "commit_write", {"action_id": prepared["action_id"]})

    await one(0)
    version += 1
    started = time.perf_counter()
    for index in range(sizes.writes):
        await one(index)
    return sizes.writes / (time.perf_counter() - started), title


TARGET_PER_S = 100


def row(rate: float, floor: float, sizes: Sizes, vendor: str) -> Row:
    durable = "synchronous=FULL" if vendor == "sqlite" else "synchronous_commit=on"
    return Row(
        AREA,
        f"prepare + commit update_record, one client, {sizes.writes} writes ({durable})",
        rate,
        "/s",
        target=f">= {TARGET_PER_S} /s",
        passed=rate >= TARGET_PER_S,
        reference=floor,
        reference_what="durable one-row commits per second (storage floor)",
    )
