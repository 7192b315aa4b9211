"""Guarded writes on the long history: a guarded create (resolve, prepare, commit) in a collection
of 100 names and in one of `--names` names, each against three no-op round trips (the storage
floor beside it), and prepare_import + commit_import of 100 rows and 100 links against two."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, statements, timed_row
from anchor_site.devtools.benchmarks.server import (
    NOTE,
    Writer,
    call,
    create_action,
    guarded_create,
    noop,
)
from anchor_site.devtools.benchmarks.session import writes
from workflow import actions
from workflow.mcp.client import ClientSession
from workflow.names.view import MAX_SCOPE_RECORDS
from workflow.resolution import resolve_record
from workflow.scope import Scope

AREA = "guarded"
SMALL_NAMES = 100
NOOP_RATIO = 2.5  # a guarded create (3 calls) may cost this many times 3 no-op calls
IMPORT_ROWS = 100
IMPORT_TARGET_MS = 150
FRESH = itertools.count()  # numbers the created names, across runs of measure


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


@dataclass
class Scopes:
    """The collections the rows write into, made before the session starts."""

    small: str
    big: str
    big_names: int  # names in `big` before the first create
    applicants: str


def creates_per_collection(sizes: Sizes) -> int:
    """Creates the run makes in each of small and big: the measured one and the second
    server's per round, warm-up rounds and a profiled re-run of 5 rounds included."""
    return 2 * (max(5, sizes.repeat) + 1) + 2 * (5 + 1)


def setup(sizes: Sizes) -> Scopes:
    """The 100-name collection and the large one. The large one holds `--names` names, fewer
    if its creates would take it past the most names one resolution scans (a resolution of a
    larger scope is incomplete, and cannot authorize a create): it ends the run at that most."""
    ctx = data.context()
    small = data.collection(ctx, "bench small team").pk
    data.bulk_insert(small, data.people(data.person_names(SMALL_NAMES, seed=11)))
    big_names = min(sizes.names, MAX_SCOPE_RECORDS - creates_per_collection(sizes))
    big = data.collection(ctx, "bench big team").pk
    data.bulk_insert(big, data.people(data.person_names(big_names, seed=13)))
    return Scopes(small, big, big_names, data.collection_named("bench applicants"))


@dataclass
class Creates:
    in_small: Samples = field(default_factory=Samples)
    in_big: Samples = field(default_factory=Samples)
    noop: Samples = field(default_factory=Samples)  # three no-op round trips

    def missed(self) -> bool:
        """Whether a create row will miss: what decides the profiled re-run, before the rows."""
        slowest = max(self.in_small.median_ms, self.in_big.median_ms)
        return slowest > NOOP_RATIO * self.noop.median_ms


@dataclass
class Imports:
    imported: Samples = field(default_factory=Samples)
    noop: Samples = field(default_factory=Samples)  # two no-op round trips

    def missed(self) -> bool:
        return self.imported.median_ms >= IMPORT_TARGET_MS


async def measure_creates(
    session: ClientSession, writer: Writer, scopes: Scopes, sizes: Sizes
) -> Creates:
    found = Creates()
    for round_ in range(max(5, sizes.repeat) + 1):  # round 0 warms up
        fresh = next(FRESH)  # a measure run again (to profile it) makes new names too
        await writer.write(scopes.small)
        spent_small = await guarded_create(session, scopes.small, f"Fresh Small {fresh} Qz")
        await writer.write(scopes.big)
        spent_big = await guarded_create(session, scopes.big, f"Fresh Big {fresh} Qz")
        noops = [await noop(session) for _ in range(3)]
        if round_:
            found.in_small.seconds.append(spent_small)
            found.in_big.seconds.append(spent_big)
            found.noop.seconds.append(sum(noops))
    return found


async def measure_imports(
    session: ClientSession, writer: Writer, scopes: Scopes, sizes: Sizes
) -> Imports:
    found = Imports()
    for round_ in range(max(3, sizes.repeat // 2) + 1):  # round 0 warms up
        await writer.write(scopes.applicants)
        started = time.perf_counter()
        arguments = import_arguments(scopes.applicants, next(FRESH))
        prepared = await call(session, "prepare_import", arguments)
        await call(session, "commit_import", commit_arguments(prepared))
        spent = time.perf_counter() - started
        noops = [await noop(session) for _ in range(2)]
        if round_:
            found.imported.seconds.append(spent)
            found.noop.seconds.append(sum(noops))
    return found


def rows(
    creates: Creates, imports: Imports, sizes: Sizes, scopes: Scopes, events: int
) -> list[Row]:
    """The rows, with the storage floor's commits and the import's statements measured here."""
    commit_ms = 1000 / writes.commit_floor(max(20, sizes.writes))
    statements_, savepoints = _statements_per_import(scopes.applicants)
    per_call = "/".join(str(n) for n in _statements_per_create(scopes.small))
    where = f"{events:,} audit events, fresh server"
    floor = (
        f"storage floor: 3 durable one-row commits = {3 * commit_ms:.1f} ms; SQL statements "
        f"in resolve/prepare/commit: {per_call}; {NOTE}"
    )
    whats = (
        f"guarded create (resolve, prepare, commit), {SMALL_NAMES}-name collection",
        f"guarded create, {scopes.big_names:,}-name collection (up to "
        f"{scopes.big_names + creates_per_collection(sizes):,} by the run's creates)",
    )
    return [
        *(
            timed_row(
                AREA,
                f"{what}, {where}",
                samples,
                target=f"<= {NOOP_RATIO}x 3 no-op calls",
                passed=samples.median_ms <= NOOP_RATIO * creates.noop.median_ms,
                reference=creates.noop.median_ms,
                reference_what="3 no-op round trips (get_server_instructions), same rounds",
                note=floor,
            )
            for what, samples in zip(whats, (creates.in_small, creates.in_big), strict=True)
        ),
        timed_row(
            AREA,
            f"prepare_import + commit_import, {IMPORT_ROWS} rows + {IMPORT_ROWS} links, "
            f"{sizes.import_names:,} names, {where}",
            imports.imported,
            under_ms=IMPORT_TARGET_MS,
            reference=imports.noop.median_ms,
            reference_what="2 no-op round trips, same rounds",
            note=f"{statements_:,} SQL statements per import, {savepoints} of them SAVEPOINT; "
            + NOTE,
        ),
    ]


def _statements_per_create(collection_id: str) -> tuple[int, int, int]:
    """SQL statements of one guarded create's three calls, run in this process."""
    scope = Scope(data.WORKSPACE, data.ACTOR)
    title = f"Counted {next(FRESH)} Qz"
    found: dict[str, Any] = {}

    def resolve() -> None:
        found["review"] = resolve_record(scope, query=title, collection_id=collection_id)

    def prepare() -> None:
        action = create_action(collection_id, title, found["review"]["resolution_id"])
        found["action"] = actions.prepare_write(scope, **action)

    def commit() -> None:
        actions.commit_write(scope, action_id=found["action"]["action_id"])

    return statements(resolve), statements(prepare), statements(commit)


def _statements_per_import(collection_id: str) -> tuple[int, int]:
    """SQL statements of one prepare_import + commit_import, run in this process."""
    scope = Scope(data.WORKSPACE, data.ACTOR)
    with CaptureQueriesContext(connection) as captured:
        prepared = actions.prepare_import(scope, **import_arguments(collection_id, 10_000))
        actions.commit_import(scope, **commit_arguments(prepared))
    sql = [query["sql"].lstrip().upper() for query in captured.captured_queries]
    return len(sql), sum(statement.startswith("SAVEPOINT") for statement in sql)
