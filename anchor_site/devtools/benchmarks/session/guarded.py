"""Guarded writes on the long history: a guarded create (resolve, prepare, commit) in a collection
of 100 names and in one of `--names` names, each against three no-op round trips (the storage
floor beside it), and prepare_import + commit_import of 100 rows and 100 links against two.

The `writes` area: guarded write throughput, prepare_write + commit_write of update_record from
one client, against the storage floor on the same database: durable one-row commits, one at a
time (a guarded write needs at least two: prepare stores the action, commit applies it)."""

from __future__ import annotations

import itertools
import time
from functools import partial
from typing import Any

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, timed_row
from anchor_site.devtools.benchmarks.server import (
    NOTE,
    Phase,
    Writer,
    call,
    create_action,
    guarded_create,
    noop,
    update_action,
)
from workflow import actions
from workflow.mcp.client import ClientSession
from workflow.names.view import MAX_SCOPE_RECORDS
from workflow.resolution import resolve_record
from workflow.scope import Scope

SMALL_NAMES = 100
NOOP_RATIO = 2.5  # a guarded create (3 calls) may cost this many times 3 no-op calls
IMPORT_ROWS = 100
IMPORT_TARGET_MS = 150
FRESH = itertools.count()  # numbers the created names, across runs of a phase
WRITES_PER_S = 100


def import_arguments(collection_id: str, round_: int) -> dict[str, Any]:
    """100 new people (names of words no stored name uses, so every row reviews clean), each
    linked to the next (the last to the first): 100 links."""
    titles = [f"{name} Qz" for name in data.person_names(IMPORT_ROWS, seed=1_000 + round_)]
    return {
        "collection_id": collection_id,
        "rows": [
            {"key": f"r{n}", "title": title, "data": {"n": n}} for n, title in enumerate(titles)
        ],
        "links": [
            {
                "source": {"row": f"r{n}"},
                "relationship_type": "next",
                "target": {"row": f"r{(n + 1) % IMPORT_ROWS}"},
            }
            for n in range(IMPORT_ROWS)
        ],
        "decision_reason": "benchmark: import",
    }


def commit_arguments(prepared: dict[str, Any]) -> dict[str, Any]:
    """Commit as an agent would once the user has said the flagged rows are new people too (a
    generated name now and then looks like a stored one)."""
    new = {"decision": "create_anyway", "clarification": "the user says these are new"}
    decisions = {row["key"]: new for row in prepared["rows"] if row["status"] != "clean"}
    return {"action_id": prepared["action_id"], **({"decisions": decisions} if decisions else {})}


def creates_per_collection(sizes: Sizes) -> int:
    """Creates the run makes in each of small and big: the measured one and the second
    server's per round, warm-up rounds and a profiled re-run of 5 rounds included."""
    return 2 * (max(5, sizes.repeat) + 1) + 2 * (5 + 1)


def phases(sizes: Sizes, events: int) -> list[Phase]:
    """The creates and the imports, each a phase of the session, over collections made here:
    one of 100 names and a large one. The large one holds `--names` names, fewer if its creates
    would take it past the most names one resolution scans (a resolution of a larger scope is
    incomplete, and cannot authorize a create): it ends the run at that most. The storage floor
    and the calls' statements are measured here too, before the servers start."""
    ctx = data.context()
    small = data.collection(ctx, "bench small team").pk
    data.bulk_insert(small, data.people(data.person_names(SMALL_NAMES, seed=11)))
    big_names = min(sizes.names, MAX_SCOPE_RECORDS - creates_per_collection(sizes))
    big = data.collection(ctx, "bench big team").pk
    data.bulk_insert(big, data.people(data.person_names(big_names, seed=13)))
    applicants = data.collection_named("bench applicants")
    commit_ms = 1000 / commit_floor(max(20, sizes.writes))
    per_call = _statements_per_create(small)
    statements_, savepoints = _statements_per_import(applicants)
    where = f"{events:,} audit events, fresh server"
    whats = (
        f"guarded create (resolve, prepare, commit), {SMALL_NAMES}-name collection, {where}",
        f"guarded create, {big_names:,}-name collection (up to "
        f"{big_names + creates_per_collection(sizes):,} by the run's creates), {where}",
    )
    floor = (
        f"storage floor: 3 durable one-row commits = {3 * commit_ms:.1f} ms; SQL statements "
        f"in resolve/prepare/commit: {per_call}; {NOTE}"
    )
    imported = (
        f"prepare_import + commit_import, {IMPORT_ROWS} rows + {IMPORT_ROWS} links, "
        f"{sizes.import_names:,} names, {where}",
        f"{statements_:,} SQL statements per import, {savepoints} of them SAVEPOINT; {NOTE}",
    )
    return [partial(creates, (small, big), whats, floor), partial(imports, applicants, *imported)]


async def creates(
    collections: tuple[str, str],
    whats: tuple[str, str],
    note: str,
    session: ClientSession,
    writer: Writer,
    sizes: Sizes,
) -> list[Row]:
    # A round's creates; its 3 no-op calls. Round 0 warms up.
    made, noops = (Samples(warmup=1), Samples(warmup=1)), Samples(warmup=1)
    for _ in range(max(5, sizes.repeat) + 1):
        fresh = next(FRESH)  # a phase run again (to profile it) makes new names too
        for samples, collection_id, size in zip(made, collections, ("Small", "Big"), strict=True):
            await writer.write(collection_id)
            title = f"Fresh {size} {fresh} Qz"
            samples.add(await guarded_create(session, collection_id, title))
        noops.add(sum([await noop(session) for _ in range(3)]))
    return [
        timed_row(
            what,
            samples,
            at_most=(NOOP_RATIO, noops, "3 no-op calls"),
            reference_what="3 no-op round trips (get_server_instructions), same rounds",
            note=note,
        )
        for what, samples in zip(whats, made, strict=True)
    ]


async def imports(
    collection_id: str, what: str, note: str, session: ClientSession, writer: Writer, sizes: Sizes
) -> list[Row]:
    # An import; its round's 2 no-op calls. Round 0 warms up.
    imported, noops = Samples(warmup=1), Samples(warmup=1)
    for _ in range(max(3, sizes.repeat // 2) + 1):
        await writer.write(collection_id)
        started = time.perf_counter()
        prepared = await call(
            session, "prepare_import", import_arguments(collection_id, next(FRESH))
        )
        await call(session, "commit_import", commit_arguments(prepared))
        imported.add(time.perf_counter() - started)
        noops.add(sum([await noop(session) for _ in range(2)]))
    return [
        timed_row(
            what,
            imported,
            under_ms=IMPORT_TARGET_MS,
            reference=noops.median_ms,
            reference_what="2 no-op round trips, same rounds",
            note=note,
        )
    ]


def _statements_per_create(collection_id: str) -> str:
    """SQL statements of one guarded create's three calls, run in this process: "r/p/c"."""
    scope = Scope(data.WORKSPACE, data.ACTOR)
    title = f"Counted {next(FRESH)} Qz"
    with CaptureQueriesContext(connection) as resolving:
        review = resolve_record(scope, query=title, collection_id=collection_id)
    with CaptureQueriesContext(connection) as preparing:
        action = create_action(collection_id, title, review["resolution_id"])
        prepared = actions.prepare_write(scope, **action)
    with CaptureQueriesContext(connection) as committing:
        actions.commit_write(scope, action_id=prepared["action_id"])
    return "/".join(str(len(c.captured_queries)) for c in (resolving, preparing, committing))


def _statements_per_import(collection_id: str) -> tuple[int, int]:
    """SQL statements of one prepare_import + commit_import, run in this process."""
    scope = Scope(data.WORKSPACE, data.ACTOR)
    with CaptureQueriesContext(connection) as captured:
        prepared = actions.prepare_import(scope, **import_arguments(collection_id, 10_000))
        actions.commit_import(scope, **commit_arguments(prepared))
    sql = [query["sql"].lstrip().upper() for query in captured.captured_queries]
    return len(sql), sum(statement.startswith("SAVEPOINT") for statement in sql)


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


def writes_phase(linked: LinkedRecord, sizes: Sizes, vendor: str) -> Phase:
    """The phase, with the storage floor measured first."""
    return partial(writes, linked, commit_floor(sizes.writes), vendor)


async def writes(
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
            target=f">= {WRITES_PER_S} /s",
            passed=rate >= WRITES_PER_S,
            reference=floor,
            reference_what="durable one-row commits per second (storage floor)",
        )
    ]
