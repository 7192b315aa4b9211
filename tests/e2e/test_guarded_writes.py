"""Guarded writes across real server processes: concurrent creation and interrupted replies."""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection

from tests.e2e.server import (
    base_env,
    call_ok,
    call_raw,
    envelope,
    initialize_raw,
    mcp_session,
    seed,
    send,
    start_raw,
)


def count_titled(env: dict[str, str], title: str) -> int:
    import subprocess
    import sys

    from tests.e2e.server import REPO_ROOT

    script = (
        "import django; django.setup(); from records.models import Record; "
        f"print(Record.objects.filter(title={title!r}).count())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "anchor_site.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


async def prepare_priya(session, people_id: str) -> str:
    review = await call_ok(
        session, "resolve_record", {"query": "Priya", "collection_id": people_id}
    )
    assert review["status"] == "no_match"
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": people_id, "title": "Priya", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "new interviewer",
        },
    )
    return prepared["action_id"]


@pytest.mark.django_db(transaction=True)
def test_two_processes_preparing_the_same_creation_cannot_both_commit(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)

    async def scenario():
        async with (
            mcp_session(env, server_log) as (first, _),
            mcp_session(env, server_log) as (second, _),
        ):
            actions = [
                await prepare_priya(first, ids["people"]),
                await prepare_priya(second, ids["people"]),
            ]
            replies = await asyncio.gather(
                first.call_tool("commit_write", {"action_id": actions[0]}),
                second.call_tool("commit_write", {"action_id": actions[1]}),
            )
            return [envelope(r) for r in replies]

    outcomes = asyncio.run(scenario())
    committed = [o for o in outcomes if o["ok"]]
    refused = [o for o in outcomes if not o["ok"]]
    assert len(committed) == 1, outcomes
    assert refused[0]["error"]["code"] == "STALE_REVIEW", refused
    assert count_titled(env, "Priya") == 1
    if connection.vendor == "postgresql":
        with open(server_log.name) as log:
            assert "database is locked" not in log.read()


@pytest.mark.django_db(transaction=True)
def test_interrupted_commit_is_replayed_without_a_second_write(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)

    async def prepare():
        async with mcp_session(env, server_log) as (session, _):
            return await prepare_priya(session, ids["people"])

    action_id = asyncio.run(prepare())
    # Commit, then lose the process before anyone reads the reply.
    process = start_raw(env, stderr=server_log)
    initialize_raw(process)
    send(
        process,
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "commit_write", "arguments": {"action_id": action_id}},
        },
    )
    assert process.stdout is not None
    process.stdout.readline()  # the reply arrives; the client never sees it
    process.kill()
    process.wait(timeout=10)

    replayed = start_raw(env, stderr=server_log)
    try:
        initialize_raw(replayed)
        first = call_raw(replayed, 2, "commit_write", {"action_id": action_id})
        second = call_raw(replayed, 3, "commit_write", {"action_id": action_id})
    finally:
        assert replayed.stdin is not None
        replayed.stdin.close()
        replayed.wait(timeout=10)
    first_result = first["structuredContent"]["result"]
    assert first_result["status"] == "committed" and first_result["replayed"] is True
    assert second["structuredContent"]["result"]["result"] == first_result["result"]
    assert count_titled(env, "Priya") == 1
