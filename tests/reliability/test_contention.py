"""Eight mcp_serve processes on one database, all preparing and committing at once.

Each writer updates three shared records by read-modify-write (a running total plus its own
counter) and creates records in a shared collection. Every acknowledged commit is counted on
the client, so the stored data can be checked against the counts: a lost or silently
overwritten update shows up as a total or a per-writer counter that does not match. Refusals
must be VERSION_CONFLICT or STALE_REVIEW, never a storage error or "database is locked".

ANCHOR_RELIABILITY_SECONDS sets how long the writers run (default 6; the slow run, which CI
also runs: 60).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import flows
from tests.reliability.harness import RawServer, Store, running

WRITERS = 8
CONFLICTS = {"VERSION_CONFLICT", "STALE_REVIEW"}
SHARED_TITLES = ("apple ledger", "river ledger", "mountain ledger")


def run_seconds(default: float) -> float:
    return float(os.environ.get("ANCHOR_RELIABILITY_SECONDS", default))


@dataclass
class Tally:
    updates: Counter[str] = field(default_factory=Counter)  # record_id -> acknowledged
    created: list[str] = field(default_factory=list)
    conflicts: Counter[str] = field(default_factory=Counter)
    failures: list[Any] = field(default_factory=list)  # anything else: the test fails
    calls: int = 0


def refusal(tally: Tally, step: str, reply: dict[str, Any]) -> None:
    code = reply["error"]["code"]
    if code in CONFLICTS:
        tally.conflicts[code] += 1
    else:
        tally.failures.append((step, reply["error"]))


def update_shared(server: RawServer, writer: int, record_id: str, tally: Tally) -> None:
    context = server.ok("get_record_context", {"record_id": record_id})
    record = context["record"]
    review = server.ok("resolve_record", {"query": record_id})
    mine = f"w{writer}"
    changes = {"total": record["data"]["total"] + 1, mine: record["data"].get(mine, 0) + 1}
    prepared = server.envelope(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": record_id,
                "changes": changes,
                "expected_version": record["version"],
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "contention test: count one more",
        },
    )
    tally.calls += 3
    if not prepared["ok"]:
        refusal(tally, "prepare update", prepared)
        return
    committed = server.envelope("commit_write", {"action_id": prepared["result"]["action_id"]})
    tally.calls += 1
    if committed["ok"]:
        assert committed["result"]["status"] == "committed", committed
        tally.updates[record_id] += 1
    else:
        refusal(tally, "commit update", committed)


def create_entry(server: RawServer, writer: int, collection_id: str, tally: Tally) -> None:
    reply = flows.create_record(
        server, collection_id, f"w{writer} {uuid.uuid4().hex}", {"writer": writer}
    )
    tally.calls += 3
    if reply["ok"]:
        tally.created.append(reply["result"]["result"]["record"]["record_id"])
    else:
        refusal(tally, "create", reply)


def as_json(value: Any) -> Any:
    """psycopg decodes jsonb; sqlite3 returns the text."""
    return json.loads(value) if isinstance(value, str) else value


def contend(env: dict[str, str], directory: Path, seconds: float, store: Store) -> None:
    with running(env, directory / "setup.log") as setup:
        counters = flows.create_collection(setup, "counters")
        ledger = flows.create_collection(setup, "entries")
        shared = []
        for title in SHARED_TITLES:
            reply = flows.create_record(setup, counters, title, {"total": 0})
            assert reply["ok"], reply
            shared.append(reply["result"]["result"]["record"]["record_id"])

    stop_at: list[float] = []
    # The clock starts when all eight are up; the action runs before any writer is released.
    ready = threading.Barrier(
        WRITERS + 1, action=lambda: stop_at.append(time.monotonic() + seconds)
    )
    tallies = [Tally() for _ in range(WRITERS)]
    logs = [directory / f"writer-{index}.log" for index in range(WRITERS)]

    def writer(index: int) -> None:
        rng = random.Random(index)
        server = RawServer(env, logs[index])
        try:
            server.initialize()
            ready.wait(timeout=180)
            while time.monotonic() < stop_at[0]:
                if rng.random() < 0.65:
                    update_shared(server, index, rng.choice(shared), tallies[index])
                else:
                    create_entry(server, index, ledger, tallies[index])
            assert server.close(timeout=10) == 0
        finally:
            server.kill()

    with ThreadPoolExecutor(WRITERS) as pool:
        futures = [pool.submit(writer, index) for index in range(WRITERS)]
        ready.wait(timeout=180)
        for future in futures:
            future.result(timeout=seconds + 300)

    failures = [(i, f) for i, t in enumerate(tallies) for f in t.failures]
    assert not failures, f"refusals other than conflicts: {failures[:10]}"
    for log in logs:
        text = log.read_text(errors="replace")
        assert "database is locked" not in text, f"{log.name}:\n{text[-3000:]}"
        assert "Traceback" not in text, f"{log.name}:\n{text[-3000:]}"
    assert not store.integrity_problems()

    # Shared records: the running total counts every acknowledged update exactly once, each
    # writer's own counter matches its tally, and every version added exactly one.
    for record_id in shared:
        version, raw = store.rows(
            "SELECT version, data FROM records_record WHERE id = ?", (record_id,)
        )[0]
        data = as_json(raw)
        acknowledged = sum(t.updates[record_id] for t in tallies)
        assert data["total"] == acknowledged, f"{record_id}: {data} after {acknowledged} updates"
        assert version == acknowledged + 1
        for index, tally in enumerate(tallies):
            assert data.get(f"w{index}", 0) == tally.updates[record_id], (index, data)
        history = store.rows(
            "SELECT version, data FROM records_recordversion WHERE record_id = ? ORDER BY version",
            (record_id,),
        )
        totals = [as_json(data)["total"] for _, data in history]
        assert totals == list(range(acknowledged + 1)), f"a version skipped or repeated: {totals}"

    # Created records: exactly the acknowledged ones, none lost, none doubled.
    stored = store.rows("SELECT id, title FROM records_record WHERE collection_id = ?", (ledger,))
    assert len({title for _, title in stored}) == len(stored), "a title was stored twice"
    for index, tally in enumerate(tallies):
        mine = {record_id for record_id, title in stored if title.startswith(f"w{index} ")}
        assert mine == set(tally.created), (
            f"writer {index}: {len(set(tally.created) - mine)} acknowledged records missing, "
            f"{len(mine - set(tally.created))} stored without acknowledgement"
        )

    updates = sum(sum(t.updates.values()) for t in tallies)
    created = sum(len(t.created) for t in tallies)
    conflicts = sum((t.conflicts for t in tallies), Counter())
    calls = sum(t.calls for t in tallies)
    print(
        f"\n{WRITERS} writers, {seconds:.0f}s: {calls} calls, {updates} updates and {created} "
        f"creations committed, conflicts {dict(conflicts)}"
    )
    assert updates and created, "the writers committed nothing"


@pytest.mark.django_db(transaction=True)
def test_eight_servers_contending_lose_nothing(server_env, store, tmp_path):
    contend(server_env, tmp_path, run_seconds(6), store)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_eight_servers_contending_for_a_minute_lose_nothing(server_env, store, tmp_path):
    contend(server_env, tmp_path, run_seconds(60), store)
