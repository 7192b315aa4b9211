"""Catching up across conversations: a fresh mcp_serve learns what another agent did.

Each conversation is its own server process on the same database, as agent windows are. Agent A
writes through the guarded path; agent B, in a new process, is told by the digest how many
changes it has not read and reads them in one list_changes call, grouped per record by title
with who and why; a later conversation of B sees only what came after. Another workspace's
changes, seeded in the same database, never appear.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.conftest import ON_POSTGRES
from tests.e2e.server import base_env, call_ok, envelope, mcp_session, seed

pytestmark = pytest.mark.slow


async def create(session, collection_id: str, title: str, reason: str, **data) -> None:
    review = await call_ok(
        session, "resolve_record", {"query": title, "collection_id": collection_id}
    )
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": data},
            "review_ids": [review["resolution_id"]],
            "decision_reason": reason,
        },
    )
    committed = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed", committed


def test_a_new_conversation_catches_up_on_another_agents_changes(server_database, tmp_path):
    # The settle window exists for PostgreSQL's out-of-order commits; here it would only
    # delay what the test reads.
    common = {**server_database, "ANCHOR_FEED_SETTLE_S": "0"}
    env_a = base_env(**common, ANCHOR_ACTOR_ID="agent-a")
    env_b = base_env(**common, ANCHOR_ACTOR_ID="agent-b")
    env_other = base_env(**common, ANCHOR_WORKSPACE_ID="elsewhere", ANCHOR_ACTOR_ID="agent-x")
    ids = seed(env_a, "--collections", "people")
    other_ids = seed(env_other, "--collections", "people")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        # B reads once to set its mark before anything happens.
        async with mcp_session(env_b, log) as (b, _):
            first = await call_ok(b, "list_changes", {"since_last_read": True, "mark_read": True})
            assert first["read_mark"]["unread_after"] == 0
            before = await call_ok(b, "workspace_digest", {})
        async with mcp_session(env_a, log) as (a, _):
            await create(a, ids["people"], "Kirat", "User introduced Kirat", email="k@x.io")
            await create(a, ids["people"], "Priya", "User introduced Priya")
        async with mcp_session(env_other, log) as (x, _):
            await create(x, other_ids["people"], "Secret person", "must stay elsewhere")
        async with mcp_session(env_b, log) as (b, _):
            digest = await call_ok(b, "workspace_digest", {})
            assert digest["unread_changes"] == 2
            caught_up = await call_ok(
                b, "list_changes", {"since_last_read": True, "mark_read": True}
            )
            titles = [group["title"] for group in caught_up["changes"]]
            assert titles == ["Kirat", "Priya"]
            kirat = caught_up["changes"][0]
            assert kirat["collection"] == "people"
            assert kirat["changes"] == [
                {
                    "what": "created",
                    "by": "agent-a",
                    "at": kirat["changes"][0]["at"],
                    "why": "User introduced Kirat",
                }
            ]
            assert "Secret person" not in str(caught_up)
            assert caught_up["read_mark"]["unread_after"] == 0
            cursor = before["changes_cursor"]
        async with mcp_session(env_a, log) as (a, _):
            await create(a, ids["people"], "Rahul", "User introduced Rahul")
        async with mcp_session(env_b, log) as (b, _):
            later = await call_ok(b, "list_changes", {"since_last_read": True})
            assert [group["title"] for group in later["changes"]] == ["Rahul"]
            # A digest's cursor from before names everything since then, marked or not.
            from_cursor = await call_ok(b, "list_changes", {"cursor": cursor})
            assert [g["title"] for g in from_cursor["changes"]] == ["Kirat", "Priya", "Rahul"]
            only_a = await call_ok(b, "list_changes", {"by": "agent-b", "cursor": cursor})
            assert only_a["changes"] == []

    try:
        anyio.run(scenario)
    finally:
        log.close()


def test_marking_a_filtered_or_unanchored_read_is_refused(server_database, tmp_path):
    env = base_env(**server_database, ANCHOR_FEED_SETTLE_S="0")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log) as (session, _):
            cases: list[tuple[dict[str, Any], str]] = [
                ({"mark_read": True}, "mark_read"),
                ({"mark_read": True, "since_last_read": True, "by": "x"}, "mark_read"),
                (
                    {"mark_read": True, "since_last_read": True, "order": "newest_first"},
                    "mark_read",
                ),
                ({"since_last_read": True, "since": "2026-01-01T00:00:00Z"}, "since_last_read"),
                ({"cursor": "not-a-cursor"}, "cursor"),
            ]
            for arguments, field in cases:
                reply = envelope(await session.call_tool("list_changes", arguments))
                assert reply["ok"] is False, arguments
                assert reply["error"]["code"] == "INVALID_INPUT"
                assert reply["error"]["details"]["field"] == field, reply

    try:
        anyio.run(scenario)
    finally:
        log.close()


async def write(session, operation: str, arguments: dict[str, Any], titles: list[str]) -> Any:
    reviews = [
        (await call_ok(session, "resolve_record", {"query": title}))["resolution_id"]
        for title in titles
    ]
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": operation,
            "arguments": arguments,
            "review_ids": reviews,
            "decision_reason": f"the user asked to {operation.split('_')[0]} them",
        },
    )
    committed = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed", committed
    return committed["result"]


def test_links_read_as_links_and_cursors_ignore_other_workspaces(server_database, tmp_path):
    common = {**server_database, "ANCHOR_FEED_SETTLE_S": "0"}
    env = base_env(**common, ANCHOR_ACTOR_ID="agent-a")
    env_other = base_env(**common, ANCHOR_WORKSPACE_ID="elsewhere", ANCHOR_ACTOR_ID="agent-x")
    ids = seed(env, "--collections", "people", "openings")
    other_ids = seed(env_other, "--collections", "people")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log) as (a, _):
            await create(a, ids["people"], "Kirat", "User introduced Kirat")
            await create(a, ids["openings"], "Junior Backend", "User opened the role")
            start = (await call_ok(a, "workspace_digest", {}))["changes_cursor"]
        # Another workspace's writes, in another process: my position does not move.
        async with mcp_session(env_other, log) as (x, _):
            for index in range(3):
                await create(x, other_ids["people"], f"Theirs {index}", "elsewhere")
        async with mcp_session(env, log) as (a, _):
            assert (await call_ok(a, "workspace_digest", {}))["changes_cursor"] == start
            quiet = await call_ok(a, "list_changes", {"cursor": start})
            assert quiet["changes"] == [] and quiet["next_cursor"] == start
            kirat = await call_ok(a, "resolve_record", {"query": "Kirat"})
            backend = await call_ok(a, "resolve_record", {"query": "Junior Backend"})
            linked = await write(
                a,
                "link_records",
                {
                    "source_id": kirat["selected_record_id"],
                    "relationship_type": "applied_to",
                    "target_id": backend["selected_record_id"],
                },
                ["Kirat", "Junior Backend"],
            )
            relationship_id = linked["relationship"]["relationship_id"]
            await write(
                a,
                "unlink_records",
                {"relationship_id": relationship_id},
                ["Kirat", "Junior Backend"],
            )
            feed = await call_ok(a, "list_changes", {"cursor": start})
        (group,) = feed["changes"]
        assert (group["title"], group["status"]) == ("Kirat", "active")
        ends = {
            "type": "applied_to",
            "source_id": kirat["selected_record_id"],
            "source_title": "Kirat",
            "target_id": backend["selected_record_id"],
            "target_title": "Junior Backend",
        }
        assert [(c["what"], c["link"]) for c in group["changes"]] == [
            ("linked", ends),
            ("unlinked", ends),
        ]
        assert "deleted" not in str(feed) and feed["next_cursor"] != start

    try:
        anyio.run(scenario)
    finally:
        log.close()


def test_the_digest_counts_only_what_the_feed_returns_now(server_database, tmp_path):
    # An hour's settle window: on PostgreSQL the feed holds back every change made here, so
    # the digest must count none of them; SQLite holds nothing back.
    env = base_env(**server_database, ANCHOR_FEED_SETTLE_S="3600", ANCHOR_ACTOR_ID="agent-a")
    ids = seed(env, "--collections", "people")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log) as (a, _):
            for name in ["Kirat", "Priya"]:
                await create(a, ids["people"], name, f"User introduced {name}")
        async with mcp_session(env, log) as (b, _):
            digest = await call_ok(b, "workspace_digest", {})
            read = await call_ok(
                b, "list_changes", {"since_last_read": True, "mark_read": True, "limit": 200}
            )
        assert digest["unread_changes"] == read["events"]
        assert read["events"] == (0 if ON_POSTGRES else 3)
        assert read["read_mark"]["unread_after"] == 0

    try:
        anyio.run(scenario)
    finally:
        log.close()
