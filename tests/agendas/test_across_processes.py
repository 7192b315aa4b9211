"""The pressure scenario across real `mcp_serve` processes: pause in one, resume in a new one.

Nothing of an agenda lives in a server process: the second process finds it, accepts the token
the first one issued (tokens need no per-process secret), and carries it to closure and sync.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from itertools import count
from typing import Any, TextIO

import pytest

from tests.agendas import scenario
from tests.agendas.driver import Driver
from tests.e2e.server import (
    base_env,
    call_ok,
    call_raw,
    envelope,
    initialize_raw,
    mcp_session,
    start_raw,
)

pytestmark = pytest.mark.slow


class RawServer:
    """One mcp_serve subprocess on a raw pipe, called synchronously like an agent's client."""

    def __init__(self, env: dict[str, str], stderr: TextIO) -> None:
        self.env, self.stderr = env, stderr
        self.ids = count(2)

    def __enter__(self) -> RawServer:
        self.process = start_raw(self.env, stderr=self.stderr)
        initialize_raw(self.process)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = call_raw(self.process, next(self.ids), name, arguments)
        envelope = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == envelope
        assert result["isError"] is (not envelope["ok"]), result
        return envelope


@pytest.mark.django_db(transaction=True)
def test_pressure_scenario_pauses_in_one_server_and_resumes_in_another(
    shared_database, server_stderr
):
    env = base_env(**shared_database)
    with RawServer(env, server_stderr) as first:
        d = Driver(first.call)
        seeded = scenario.seed_findings(d)
        scenario.first_half(d, seeded)
        agenda_id, paused_token = d.agenda_id, d.token
        first_pid = first.process.pid

    with RawServer(env, server_stderr) as second:
        assert second.process.pid != first_pid
        d = Driver(second.call)
        scenario.change_finding_meanwhile(d, seeded)
        view = d.ok("agenda_view", {"agenda_id": agenda_id})
        assert view["cursor_token"] == paused_token  # issued by the first process, still valid
        scenario.second_half(d, seeded, agenda_id)


@pytest.mark.django_db(transaction=True)
def test_two_servers_racing_with_one_token_move_the_agenda_once(shared_database, server_stderr):
    env = base_env(**shared_database)

    async def race() -> list[dict[str, Any]]:
        async with (
            mcp_session(env, server_stderr) as (first, _),
            mcp_session(env, server_stderr) as (second, _),
        ):
            started = await call_ok(
                first,
                "agenda_start",
                {"title": "Race", "items": ["one", "two"], "source_reference": "test"},
            )
            acknowledged = await call_ok(
                first,
                "agenda_acknowledge",
                {
                    "agenda_id": started["agenda_id"],
                    "cursor_token": started["cursor_token"],
                    "presentation_id": started["presentation_id"],
                },
            )
            same = {"agenda_id": started["agenda_id"], "cursor_token": acknowledged["cursor_token"]}
            replies = await asyncio.gather(
                first.call_tool("agenda_step", {**same, "action": "complete", "text": "A"}),
                second.call_tool("agenda_step", {**same, "action": "complete", "text": "B"}),
            )
            outcomes = [envelope(reply) for reply in replies]
            health = await call_ok(
                second, "agenda_view", {"agenda_id": started["agenda_id"], "view": "health"}
            )
            return [*outcomes, health]

    first, second, health = asyncio.run(race())
    assert sorted([first["ok"], second["ok"]]) == [False, True], (first, second)
    loser = first if not first["ok"] else second
    assert loser["error"]["code"] == "STALE_CURSOR"
    assert health["healthy"] and health["revision"] == 3, health


@pytest.mark.django_db(transaction=True)
def test_outcomes_moved_after_a_sync_reach_the_records_from_another_server(
    shared_database, server_stderr
):
    """Sync while paused in one server; revise and revisit in a second; the next sync writes
    the new outcomes, and a second agenda cannot take the records meanwhile."""
    env = base_env(**shared_database)
    with RawServer(env, server_stderr) as first:
        d = Driver(first.call)
        seeded = scenario.seed_findings(d)
        one, two = seeded["record_ids"][:2]
        started = d.ok(
            "agenda_start",
            {"title": "Two findings", "record_ids": [one, two], "source_reference": "review"},
        )
        d.acknowledge(started)
        d.step("complete", "Trailing commas are rejected.")
        d.step("next")
        d.step("defer", "Needs a product decision.")
        d.ok("agenda_control", d.mine(action="pause"))
        assert d.ok("agenda_sync_records", d.mine())["sync"]["counts"] == {"synced": 2}
        agenda_id = d.agenda_id

    with RawServer(env, server_stderr) as second:
        d = Driver(second.call)
        digest = d.ok("workspace_digest")
        assert [a["agenda_id"] for a in digest["open_agendas"]] == [agenda_id]
        d.ok("agenda_view", {"agenda_id": agenda_id})
        held = d.call(
            "agenda_start",
            {"title": "Again", "record_ids": [two], "source_reference": "review"},
        )
        assert held["error"]["code"] == "RECORD_HELD" and agenda_id in held["error"]["message"]
        d.acknowledge(d.ok("agenda_control", d.mine(action="resume")))
        d.step("revise", "Trailing commas are rejected, with a clear error.", item_number=1)
        d.step("revisit", item_number=2)
        d.step("complete", "Back-off capped at 30 seconds.")
        closed = d.ok("agenda_control", d.mine(action="finish", text="Both settled."))
        assert closed["closure"]["sync_required"] is True
        synced = d.ok("agenda_sync_records", d.mine())
        assert synced["sync"]["counts"] == {"synced": 2}
        first_record = scenario.record_data(d, one)["agenda_outcome"]
        assert first_record["conclusion"] == "Trailing commas are rejected, with a clear error."
        assert scenario.record_data(d, two)["agenda_outcome"]["state"] == "completed"
        again = d.ok("agenda_sync_records", d.mine())
        assert all(r.get("earlier_sync") for r in again["sync"]["results"])
        health = d.ok("agenda_view", {"agenda_id": agenda_id, "view": "health"})
        assert health["healthy"], health["problems"]
