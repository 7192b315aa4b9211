"""Guarded writes against their floor, and against the size of the scope they are checked in.

Over stdio from the official client, on the benchmark database, in one session:

- a guarded create (resolve_record of a fresh title -> prepare_write create_record citing it ->
  commit_write) in a collection of 100 names, against its floor measured in the same run:
  three no-op round trips (get_server_instructions) plus three durable one-row commits
  (writes.commit_floor), the least three calls that each commit can cost;
- the same guarded create in the collection of `--names` names. Every create moves that
  collection's names counter, so each next resolution there starts from a changed name list:
  the ratio to the 100-name figure is what a large collection costs a writer;
- prepare_import + commit_import of 100 rows with 100 links between them into the collection
  of 10,000 names, with the SQL statements (and savepoints) of one import counted in process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from anchor_site.devtools.benchmarks import data, writes
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes
from anchor_site.devtools.benchmarks.server import call
from workflow.mcp.client import ClientSession

AREA = "guarded"
SMALL_NAMES = 100
FLOOR_RATIO = 1.5  # a guarded create may cost this many times its floor
SCALE_RATIO = 1.5  # ... and this many times more in a large collection than in a small one
IMPORT_ROWS = 100
IMPORT_TARGET_MS = 100


async def guarded_create(session: ClientSession, collection_id: str, title: str) -> float:
    started = time.perf_counter()
    review = await call(session, "resolve_record", {"query": title, "collection_id": collection_id})
    prepared = await call(
        session,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "benchmark: guarded create",
        },
    )
    await call(session, "commit_write", {"action_id": prepared["action_id"]})
    return time.perf_counter() - started


def import_arguments(collection_id: str, round_: int) -> dict[str, Any]:
    """100 new people (names of words no stored name uses, so every row reviews clean), each
    linked to the next (the last to the first): 100 links."""
    keys = [f"r{index}" for index in range(IMPORT_ROWS)]
    titles = [f"{name} Qz" for name in data.person_names(IMPORT_ROWS, seed=1_000 + round_)]
    return {
        "collection_id": collection_id,
        "rows": [
            {"key": key, "title": title, "data": {"n": index}}
            for index, (key, title) in enumerate(zip(keys, titles, strict=True))
        ],
        "links": [
            {
                "source": {"row": key},
                "relationship_type": "next",
                "target": {"row": keys[(index + 1) % len(keys)]},
            }
            for index, key in enumerate(keys)
        ],
        "decision_reason": "benchmark: import",
    }


def commit_arguments(prepared: dict[str, Any]) -> dict[str, Any]:
    """Commit as an agent would once the user has said the flagged rows are new people too (a
    generated name now and then looks like a stored one)."""
    flagged = [row["key"] for row in prepared["rows"] if row["status"] != "clean"]
    decisions = {
        key: {"decision": "create_anyway", "clarification": "the user says these are new"}
        for key in flagged
    }
    return {"action_id": prepared["action_id"], **({"decisions": decisions} if decisions else {})}


@dataclass
class Scopes:
    """The collections the rows write into, made before the session starts."""

    small: str
    big: str
    applicants: str


def setup(big_collection_id: str) -> Scopes:
    small = data.collection(data.context(), "bench small team").pk
    data.bulk_insert(small, data.people(data.person_names(SMALL_NAMES, seed=11)))
    return Scopes(small, big_collection_id, _collection_named("bench applicants"))


@dataclass
class Timings:
    in_small: Samples = field(default_factory=Samples)
    in_big: Samples = field(default_factory=Samples)
    noop: Samples = field(default_factory=Samples)  # three no-op round trips
    imported: Samples = field(default_factory=Samples)


async def measure(session: ClientSession, sizes: Sizes, scopes: Scopes) -> Timings:
    timings = Timings()
    for round_ in range(max(5, sizes.repeat) + 1):  # round 0 warms up
        spent_small = await guarded_create(session, scopes.small, f"Fresh Small {round_} Qz")
        spent_big = await guarded_create(session, scopes.big, f"Fresh Big {round_} Qz")
        calls = []
        for _ in range(3):
            started = time.perf_counter()
            await call(session, "get_server_instructions", {})
            calls.append(time.perf_counter() - started)
        if round_:
            timings.in_small.seconds.append(spent_small)
            timings.in_big.seconds.append(spent_big)
            timings.noop.seconds.append(sum(calls))
    for round_ in range(max(3, sizes.repeat // 2) + 1):
        started = time.perf_counter()
        arguments = import_arguments(scopes.applicants, round_)
        prepared = await call(session, "prepare_import", arguments)
        await call(session, "commit_import", commit_arguments(prepared))
        if round_:
            timings.imported.seconds.append(time.perf_counter() - started)
    return timings


def rows(timings: Timings, sizes: Sizes, scopes: Scopes) -> list[Row]:
    """The rows, with the floor's commits and the import's statements measured here."""
    in_small, in_big, imported = timings.in_small, timings.in_big, timings.imported
    commit_ms = 1000 / writes.commit_floor(max(20, sizes.writes))
    floor_ms = timings.noop.median_ms + 3 * commit_ms
    statements, savepoints = _statements_per_import(scopes.applicants)
    return [
        Row(
            AREA,
            f"guarded create (resolve, prepare, commit), {SMALL_NAMES}-name collection",
            in_small.median_ms,
            "ms",
            p95=in_small.p95_ms,
            target=f"<= {FLOOR_RATIO}x floor",
            passed=in_small.median_ms <= FLOOR_RATIO * floor_ms,
            reference=floor_ms,
            reference_what=f"floor: 3 no-op round trips ({timings.noop.median_ms:.1f} ms) + 3 "
            f"durable one-row commits ({commit_ms:.1f} ms each)",
        ),
        Row(
            AREA,
            f"guarded create, {sizes.names:,}-name collection (names changed by the last create)",
            in_big.median_ms,
            "ms",
            p95=in_big.p95_ms,
            target=f"<= {SCALE_RATIO}x the {SMALL_NAMES}-name create",
            passed=in_big.median_ms <= SCALE_RATIO * in_small.median_ms,
            reference=in_small.median_ms,
            reference_what=f"the same create in the {SMALL_NAMES}-name collection",
        ),
        Row(
            AREA,
            f"prepare_import + commit_import, {IMPORT_ROWS} rows + {IMPORT_ROWS} links, "
            f"{sizes.import_names:,} names",
            imported.median_ms,
            "ms",
            p95=imported.p95_ms,
            target=f"< {IMPORT_TARGET_MS} ms",
            passed=imported.median_ms < IMPORT_TARGET_MS,
            note=f"{statements:,} SQL statements per import, {savepoints} of them SAVEPOINT",
        ),
    ]


def _collection_named(name: str) -> str:
    from records.models import Collection

    return Collection.objects.get(workspace_id=data.WORKSPACE, name=name).pk


def _statements_per_import(collection_id: str) -> tuple[int, int]:
    """SQL statements of one prepare_import + commit_import, run in this process."""
    from workflow import actions
    from workflow.scope import Scope

    scope = Scope(data.WORKSPACE, data.ACTOR)
    with CaptureQueriesContext(connection) as captured:
        prepared = actions.prepare_import(scope, **import_arguments(collection_id, 10_000))
        actions.commit_import(scope, **commit_arguments(prepared))
    sql = [query["sql"].lstrip().upper() for query in captured.captured_queries]
    return len(sql), sum(statement.startswith("SAVEPOINT") for statement in sql)
