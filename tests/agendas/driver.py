"""Run agenda tools the way an agent does, through any transport, and prove refusals inert.

A Driver wraps one `call(name, arguments) -> envelope` function: the in-process MCP client or
a raw pipe to an `mcp_serve` subprocess. `refused` checks the code and that the agenda's sealed
state, event log and revision did not move (the health view's hashes cover every agenda row),
plus whatever extra snapshot the test supplies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.envelope import expect_ok, expect_refused

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


class Driver:
    def __init__(self, call: Call, snapshot: Callable[[], Any] | None = None) -> None:
        self.call = call
        self.snapshot = snapshot or (lambda: None)
        self.agenda_id = ""
        self.token = ""
        self.refusals: list[str] = []

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = expect_ok(self.call(name, arguments or {}), name)
        if isinstance(result, dict) and "cursor_token" in result:
            self.agenda_id = result["agenda_id"]
            self.token = result["cursor_token"]
        return result

    def fingerprint(self, *, healthy: bool = True) -> tuple[str, str, int, int]:
        health = self.ok("agenda_view", {"agenda_id": self.agenda_id, "view": "health"})
        assert health["healthy"] is healthy, health["problems"]
        return (
            health["state_hash"],
            health["event_log_hash"],
            health["revision"],
            health["event_count"],
        )

    def refused(
        self, name: str, arguments: dict[str, Any], code: str, *, healthy: bool = True
    ) -> dict[str, Any]:
        """healthy=False for an agenda known to fail its health check (it must stay failing)."""
        before, extra = self.fingerprint(healthy=healthy), self.snapshot()
        error = expect_refused(self.call(name, arguments), name, code)
        assert self.fingerprint(healthy=healthy) == before, f"{name} refusal changed the agenda"
        assert self.snapshot() == extra, f"{name} refusal changed the database"
        self.refusals.append(code)
        return error

    # shorthands for the agenda in hand

    def mine(self, **arguments: Any) -> dict[str, Any]:
        return {"agenda_id": self.agenda_id, "cursor_token": self.token, **arguments}

    def step(self, action: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
        arguments = self.mine(action=action, **extra)
        if text is not None:
            arguments["text"] = text
        return self.ok("agenda_step", arguments)

    def acknowledge(self, presented: dict[str, Any]) -> dict[str, Any]:
        assert presented["presentation_id"], presented
        assert presented["whole_picture"]["text"]  # what the user is shown first
        return self.ok(
            "agenda_acknowledge", self.mine(presentation_id=presented["presentation_id"])
        )

    def write(self, operation: str, arguments: dict[str, Any], review_ids: list[str]) -> Any:
        prepared = self.ok(
            "prepare_write",
            {
                "operation": operation,
                "arguments": arguments,
                "review_ids": review_ids,
                "decision_reason": "the user asked",
            },
        )
        return self.ok("commit_write", {"action_id": prepared["action_id"]})["result"]
