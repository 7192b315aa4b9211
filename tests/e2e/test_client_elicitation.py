"""Clarification through the client: the official client's elicitation callback answers it.

`resolve_record(ask_user=true)` on a name that needs clarification puts the question to the
user in the client's dialog (form mode). The callback plays the user: it picks a candidate,
"a different one", declines, or picks "cancel". The answer is stored on the resolution as
user-confirmed in the client and lets a write cite it without agent-reported text; a declined
or cancelled question stores nothing. A client without the capability gets the plain reply and
the reason. The audit keeps the two kinds of clarification apart.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import types

from tests.e2e.server import base_env, call_ok, envelope, mcp_session, seed

pytestmark = pytest.mark.slow

CLIENT = types.Implementation(name="dialog-client", version="7.1")


class ScriptedUser:
    """An elicitation callback answering each question with the next scripted reply.

    A reply is ("accept", title prefix of the choice to pick) or ("decline" | "cancel", None).
    """

    def __init__(self, *replies: tuple[str, str | None]) -> None:
        self.replies = list(replies)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams), params
        self.asked.append(params)
        action, wanted = self.replies.pop(0)
        if action != "accept":
            return types.ElicitResult(action=action)  # type: ignore[arg-type]
        choices = params.requestedSchema["properties"]["choice"]["oneOf"]
        value = next(c["const"] for c in choices if c["title"].startswith(str(wanted)))
        return types.ElicitResult(action="accept", content={"choice": value})


async def resolve(session, query: str, people: str) -> dict[str, Any]:
    return await call_ok(
        session, "resolve_record", {"query": query, "collection_id": people, "ask_user": True}
    )


async def prepare(session, operation: str, arguments: dict[str, Any], review: str, **extra):
    return envelope(
        await session.call_tool(
            "prepare_write",
            {
                "operation": operation,
                "arguments": arguments,
                "review_ids": [review],
                "decision_reason": "The user asked for this change",
                **extra,
            },
        )
    )


async def commit(session, prepared: dict[str, Any]) -> None:
    assert prepared["ok"], prepared
    action = prepared["result"]["action_id"]
    committed = await call_ok(session, "commit_write", {"action_id": action})
    assert committed["status"] == "committed", committed


async def last_event(session, record_id: str) -> dict[str, Any]:
    history = await call_ok(session, "get_record_history", {"record_id": record_id, "limit": 1})
    return history["events"][0]


def test_the_user_answers_a_clarification_in_the_client(server_database, tmp_path):
    env = base_env(**server_database)
    ids = seed(env)
    user = ScriptedUser(
        ("accept", "Kirat"), ("accept", "A different one"), ("decline", None), ("accept", "Cancel")
    )
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log, elicitation_callback=user, client_info=CLIENT) as (s, _):
            # A candidate: the write cites the resolution with no clarification text.
            picked = await resolve(s, "Kriat", ids["people"])
            assert picked["status"] == "needs_clarification"
            asked = picked["client_question"]
            assert asked["stored"] is True and asked["answer"].startswith("Kirat")
            confirmation = asked["confirmation"]
            assert confirmation["record_id"] == ids["kirat"]
            assert confirmation["client"] == {"name": "dialog-client", "version": "7.1"}
            assert confirmation["question"] == user.asked[0].message
            assert "Kriat" in confirmation["question"]
            assert ids["kirat"] in picked["next_step"]
            form = user.asked[0].requestedSchema["properties"]["choice"]["oneOf"]
            assert [c["title"] for c in form] == [
                "Kirat (people)",
                "A different one (none of these)",
                "Cancel: do not decide now",
            ]
            updated = await prepare(
                s,
                "update_record",
                {"record_id": ids["kirat"], "expected_version": 1, "changes": {"stage": "onsite"}},
                picked["resolution_id"],
            )
            await commit(s, updated)
            event = await last_event(s, ids["kirat"])
            assert event["agent_reported_clarification"] is None
            (evidence,) = event["review_evidence"]
            assert evidence["user_confirmed_in_client"]["answer"] == "Kirat (people)"
            assert evidence["user_confirmed_in_client"]["label"] == "user-confirmed in the client"

            # "A different one": creating the new title needs no agent-reported text either.
            different = await resolve(s, "Kriat", ids["people"])
            assert different["client_question"]["confirmation"]["different"] is True
            created = await prepare(
                s,
                "create_record",
                {"collection_id": ids["people"], "title": "Kriat", "data": {}},
                different["resolution_id"],
            )
            await commit(s, created)
            found = await call_ok(
                s, "resolve_record", {"query": "Kriat", "collection_id": ids["people"]}
            )
            new_id = found["selected_record_id"]
            assert new_id and new_id != ids["kirat"]
            event = await last_event(s, new_id)
            assert event["review_evidence"][0]["user_confirmed_in_client"]["different"] is True

            # Declined, then the cancel choice: nothing is stored, so a write still needs a
            # clarification; the agent-reported path is the one left, and is labelled so.
            for _ in range(2):
                refused = await resolve(s, "Kirrat", ids["people"])
                assert refused["client_question"] == {
                    "asked": True,
                    "answer": "cancelled",
                    "stored": False,
                }
                assert "cancelled" in refused["next_step"]
                blocked = await prepare(
                    s,
                    "update_record",
                    {"record_id": ids["kirat"], "expected_version": 2, "changes": {"x": 1}},
                    refused["resolution_id"],
                )
                assert blocked["error"]["code"] == "NEEDS_CLARIFICATION", blocked
                assert "ask_user: true" in blocked["error"]["message"]
            reported = await prepare(
                s,
                "update_record",
                {"record_id": ids["kirat"], "expected_version": 2, "changes": {"x": 1}},
                refused["resolution_id"],
                clarification="The user said Kirrat is Kirat",
            )
            await commit(s, reported)
            event = await last_event(s, ids["kirat"])
            assert event["agent_reported_clarification"] == "The user said Kirrat is Kirat"
            assert "user_confirmed_in_client" not in event["review_evidence"][0]

            # Nothing to ask: a resolved name is not put to the user.
            resolved = await resolve(s, "Abhishek", ids["people"])
            assert resolved["client_question"]["asked"] is False
            assert len(user.asked) == 4

    try:
        anyio.run(scenario)
    finally:
        log.close()


def test_a_client_without_elicitation_gets_the_plain_flow_and_the_reason(server_database, tmp_path):
    env = base_env(**server_database)
    ids = seed(env)
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log) as (s, _):
            plain = await resolve(s, "Kriat", ids["people"])
            assert plain["status"] == "needs_clarification"
            assert plain["client_question"]["asked"] is False
            assert "elicitation capability" in plain["client_question"]["reason"]
            assert plain["next_step"].startswith("Ask the user")
            blocked = await prepare(
                s,
                "update_record",
                {"record_id": ids["kirat"], "expected_version": 1, "changes": {"x": 1}},
                plain["resolution_id"],
            )
            assert blocked["error"]["code"] == "NEEDS_CLARIFICATION"

    try:
        anyio.run(scenario)
    finally:
        log.close()


class RowPicker:
    """An elicitation callback for an import: per row title, the title prefix of its choice."""

    def __init__(self, *replies: dict[str, str] | None) -> None:
        self.replies = list(replies)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams), params
        self.asked.append(params)
        wanted = self.replies.pop(0)
        if wanted is None:
            return types.ElicitResult(action="cancel")
        content = {}
        for field, schema in params.requestedSchema["properties"].items():
            prefix = wanted[schema["title"]]
            content[field] = next(
                c["const"] for c in schema["oneOf"] if c["title"].startswith(prefix)
            )
        return types.ElicitResult(action="accept", content=content)


def test_the_user_decides_flagged_import_rows_in_the_client(server_database, tmp_path):
    env = base_env(**server_database)
    ids = seed(env)
    user = RowPicker(None, {"Kriat": "A different one", "Abhishek": "Abhishek"})
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below
    rows = [
        {"key": "a", "title": "Kriat", "data": {}},
        {"key": "b", "title": "Abhishek", "data": {}},
        {"key": "c", "title": "Neha", "data": {}},
    ]

    async def scenario():
        async with mcp_session(env, log, elicitation_callback=user, client_info=CLIENT) as (s, _):
            prepared = await call_ok(
                s,
                "prepare_import",
                {"collection_id": ids["people"], "rows": rows, "decision_reason": "New hires"},
            )
            assert sorted(prepared["needs_decision"]) == ["a", "b"]
            commit = {"action_id": prepared["action_id"], "ask_user": True}
            # Cancelled in the dialog: nothing is committed, the import stays prepared.
            cancelled = envelope(await s.call_tool("commit_import", commit))
            assert cancelled["error"]["code"] == "NEEDS_CLARIFICATION", cancelled
            assert cancelled["error"]["details"]["client_question"]["stored"] is False
            none_yet = await call_ok(
                s, "resolve_record", {"query": "Neha", "collection_id": ids["people"]}
            )
            assert none_yet["status"] == "no_match"
            # Answered: a different one for Kriat, the stored Abhishek for Abhishek.
            committed = await call_ok(s, "commit_import", commit)
            assert committed["status"] == "committed", committed
            outcome = committed["result"]["rows"]
            assert outcome["a"]["outcome"] == "created"
            assert outcome["b"]["outcome"] == "used_existing"
            assert outcome["b"]["record_id"] == ids["abhishek"]
            assert outcome["b"]["resolution_id"], "a follow-up write cites it"
            assert outcome["c"]["outcome"] == "created"
            asked = committed["client_question"]
            assert asked["stored"] is True
            assert asked["rows"]["a"]["user_confirmed_in_client"]["client"]["name"] == (
                "dialog-client"
            )
            form = user.asked[1].requestedSchema["properties"]
            assert [f["title"] for f in form.values()] == ["Kriat", "Abhishek"]
            event = await last_event(s, outcome["a"]["record_id"])
            assert event["agent_reported_clarification"] is None
            (row_evidence,) = [e for e in event["review_evidence"] if "import_row" in e]
            confirmed = row_evidence["user_confirmed_in_client"]
            assert confirmed["answer"] == "A different one (create it)"
            assert "Kriat" in confirmed["question"]
            clean = await last_event(s, outcome["c"]["record_id"])
            assert not any("user_confirmed_in_client" in e for e in clean["review_evidence"])

    try:
        anyio.run(scenario)
    finally:
        log.close()


def test_without_the_capability_commit_import_says_why(server_database, tmp_path):
    env = base_env(**server_database)
    ids = seed(env)
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log) as (s, _):
            prepared = await call_ok(
                s,
                "prepare_import",
                {
                    "collection_id": ids["people"],
                    "rows": [{"key": "a", "title": "Kriat", "data": {}}],
                    "decision_reason": "New hire",
                },
            )
            refused = envelope(
                await s.call_tool(
                    "commit_import", {"action_id": prepared["action_id"], "ask_user": True}
                )
            )
            assert refused["error"]["code"] == "INVALID_INPUT", refused
            reason = refused["error"]["details"]["client_question"]["reason"]
            assert "elicitation capability" in reason

    try:
        anyio.run(scenario)
    finally:
        log.close()
