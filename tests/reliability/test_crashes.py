"""SIGKILL mcp_serve mid-commit: the store stays intact, a commit is all or nothing, a replayed
action_id writes exactly one copy, and every commit a client saw succeed is still there.

A killed process is the harshest crash a test can cause without pulling the power: no
rollback, no connection close, no checkpoint, a half-written reply on the pipe. What a power
loss adds is the operating system's page cache; see test_sqlite_commits_are_fsynced_wal.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
import uuid
from collections import Counter, deque
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import flows
from tests.reliability.harness import RawServer, Store, envelope_of, running

# The normal suite kills 12 times per backend (a kill and its checks cost about a second); the
# slow run (-m slow, which CI runs too) 60, past the 50 asked for. ANCHOR_RELIABILITY_KILLS
# overrides both.
KILLS_OVERRIDE = os.environ.get("ANCHOR_RELIABILITY_KILLS")
SEED = int(os.environ.get("ANCHOR_RELIABILITY_SEED", str(random.SystemRandom().randrange(10**6))))
ROWS = 100
BEGAN = b"Processing request of type CallToolRequest"


class Victims:
    """Servers started ahead, so the next ones boot while the current one is killed.

    Starting a server (Django, the MCP SDK) takes longer than a kill and its checks, so one
    spare was still booting when it was needed: with a few in flight, the boots overlap the
    commits, checks and replays of the kills before them.
    """

    AHEAD = 2

    def __init__(self, env: dict[str, str], directory: Path) -> None:
        self.env, self.directory, self.started = env, directory, 0
        self._spares = deque(self._start() for _ in range(self.AHEAD))

    def _start(self) -> RawServer:
        self.started += 1
        return RawServer(self.env, self.directory / f"victim-{self.started}.log")

    def next(self) -> RawServer:
        victim = self._spares.popleft()
        self._spares.append(self._start())
        victim.initialize()
        victim.ok("list_collections", {})  # connected and warm, like a server mid-session
        return victim

    def close(self) -> None:
        for spare in self._spares:
            spare.kill()


class KillWindow:
    """How long a commit takes here, learnt as the run goes: kills are drawn from this window.

    One measured commit is a poor guide on a loaded machine: a slow first one made the window so
    wide that most kills came after the reply and too few landed mid-commit. Every reply that
    beats its kill is a fresh measurement, so a window that is too wide narrows itself.
    """

    MARGIN = 1.2

    def __init__(self, first_commit: float) -> None:
        self.commits = [first_commit]

    def observe(self, commit: float) -> None:
        self.commits.append(commit)

    @property
    def seconds(self) -> float:
        return statistics.median(self.commits) * self.MARGIN


def commit_then_kill(
    victim: RawServer, arguments: dict[str, Any], delay: float
) -> tuple[dict[str, Any] | None, float]:
    """Send commit_import, SIGKILL after `delay` seconds.

    Returns the reply if it came first (else None) and the seconds until the reply or the kill.
    """
    sent = time.monotonic()
    request_id = victim.send_call("commit_import", arguments)
    reply = None
    while reply is None and (left := sent + delay - time.monotonic()) > 0:
        message = victim.read_message(left)
        if message is not None and message.get("id") == request_id:
            reply = message
    took = time.monotonic() - sent
    victim.kill()  # SIGKILL: no rollback, no close, no goodbye
    return reply, took


def check_all_or_nothing(store: Store, action_id: str, links: int) -> str:
    problems = store.integrity_problems()
    assert not problems, f"store damaged after a kill: {problems}"
    state = store.action_state(action_id)
    written = store.written_by_action(action_id)
    full = {
        "records": ROWS,
        "relationships": links,
        "record_events": ROWS,
        "relationship_events": links,
    }
    empty = dict.fromkeys(full, 0)
    if state == "committed":
        assert written == full, f"committed action {action_id} wrote only part: {written}"
    else:
        assert state == "prepared", f"action {action_id} is {state} after a kill"
        assert written == empty, f"uncommitted action {action_id} left rows: {written}"
    return state


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kills", [12, pytest.param(60, marks=pytest.mark.slow)])
def test_sigkill_at_random_points_of_a_large_import_commit(kills, server_env, store, tmp_path):
    kills = int(KILLS_OVERRIDE or kills)
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    with running(server_env, tmp_path / "helper.log") as helper:
        collection_id = flows.create_collection(helper, "imports")

        def new_action():
            _, arguments, links = flows.prepare_import(
                helper, collection_id, f"import {outcomes['committed']}", ROWS
            )
            return arguments, len(links)

        victims = Victims(server_env, tmp_path)
        try:
            # One unkilled commit by a fresh process measures how long the window is here.
            arguments, links = new_action()
            victim = victims.next()
            started = time.monotonic()
            first = victim.reply_to(victim.send_call("commit_import", arguments))
            window = KillWindow(time.monotonic() - started)
            victim.kill()
            assert envelope_of(first["result"])["ok"], first
            check_all_or_nothing(store, arguments["action_id"], links)
            outcomes["committed"] += 1
            arguments, links = new_action()

            for _ in range(kills):
                victim = victims.next()
                reply, took = commit_then_kill(victim, arguments, rng.uniform(0, window.seconds))
                state = check_all_or_nothing(store, arguments["action_id"], links)
                if reply is not None:
                    window.observe(took)
                    # Acknowledged means stored.
                    assert envelope_of(reply["result"])["ok"], reply
                    assert state == "committed", "an acknowledged commit was lost"
                    outcomes["acknowledged, then killed"] += 1
                elif state == "committed":
                    outcomes["committed, killed before the reply was read"] += 1
                elif BEGAN in victim.log_path.read_bytes():
                    outcomes["killed mid-call, rolled back"] += 1
                else:
                    outcomes["killed before the call began"] += 1
                if state != "committed":
                    continue  # the next victim replays the same action_id
                replay = helper.ok("commit_import", arguments)
                assert replay["status"] == "committed" and replay["replayed"] is True, replay
                assert check_all_or_nothing(store, arguments["action_id"], links) == "committed"
                outcomes["committed"] += 1
                arguments, links = new_action()

            # The action the last victim left behind: one replay commits it exactly once.
            final = helper.ok("commit_import", arguments)
            again = helper.ok("commit_import", arguments)
            assert final["status"] == again["status"] == "committed", (final, again)
            # The same rows and links; each replay issues its rows' resolution_ids afresh
            # (a stored one may have expired), so those are compared apart.
            assert again["replayed"] is True
            assert _without_resolutions(again["result"]) == _without_resolutions(final["result"])
            assert check_all_or_nothing(store, arguments["action_id"], links) == "committed"
            outcomes["committed"] += 1
        finally:
            victims.close()

    total = store.value(
        "SELECT count(*) FROM records_record WHERE collection_id = ?", (collection_id,)
    )
    assert total == outcomes["committed"] * ROWS, f"lost or doubled rows: {total}, {outcomes}"
    mid = outcomes["killed mid-call, rolled back"]
    print(f"\nkills={kills} seed={SEED} window={window.seconds:.2f}s outcomes={dict(outcomes)}")
    # Otherwise the kills missed the commit and the test proved nothing.
    assert mid >= kills // 4, f"too few kills landed mid-commit (seed {SEED}): {dict(outcomes)}"


@pytest.mark.django_db(transaction=True)
def test_acknowledged_commits_survive_a_crash(server_env, store, tmp_path):
    """A writer commits small records as fast as it can and is killed at a random moment,
    several times over; every record whose commit_write reply arrived is stored intact."""
    rng = random.Random(SEED)
    acknowledged: dict[str, dict[str, Any]] = {}
    # All three writers boot while the collection is made: each is killed in its own turn.
    writers = [RawServer(server_env, tmp_path / f"writer-{n}.log") for n in range(3)]
    try:
        with running(server_env, tmp_path / "setup.log") as setup:
            collection_id = flows.create_collection(setup, "ledger")
        for round_number, writer in enumerate(writers):
            writer.initialize()
            deadline = time.monotonic() + rng.uniform(0.3, 1.5)
            index = 0
            try:
                while time.monotonic() < deadline:
                    index += 1
                    data = {"round": round_number, "index": index}
                    reply = flows.create_record(
                        writer, collection_id, f"entry {uuid.uuid4().hex}", data
                    )
                    assert reply["ok"], reply
                    record = reply["result"]["result"]["record"]
                    acknowledged[record["record_id"]] = data
            finally:
                writer.kill()
            assert not store.integrity_problems()
    finally:
        for writer in writers:  # those a failure left unkilled
            writer.kill()
    stored = dict(
        store.rows("SELECT id, data FROM records_record WHERE collection_id = ?", (collection_id,))
    )
    missing = sorted(set(acknowledged) - set(stored))
    assert not missing, f"{len(missing)} acknowledged commits lost: {missing[:5]}"
    for record_id, data in acknowledged.items():
        value = stored[record_id]
        assert (value if isinstance(value, dict) else json.loads(value)) == data, record_id
    print(f"\nacknowledged={len(acknowledged)} stored={len(stored)}")


@pytest.mark.sqlite  # the SQLite file format
@pytest.mark.django_db(transaction=True)
def test_sqlite_commits_are_fsynced_wal(server_env, store, tmp_path):
    """The file is in WAL mode (persistent, in the header), so synchronous=FULL, which the
    settings tests check on a live connection, fsyncs the WAL before a commit returns."""
    with running(server_env, tmp_path / "server.log") as server:
        flows.create_collection(server, "ledger")
    assert store.value("PRAGMA journal_mode") == "wal"
    header = Path(store.path).read_bytes()[:20]
    assert header[18] == header[19] == 2, "WAL read/write version bytes are not set"


def _without_resolutions(result: dict) -> dict:
    rows = {
        key: {k: v for k, v in row.items() if k != "resolution_id"}
        for key, row in result.get("rows", {}).items()
    }
    return {**result, "rows": rows}
