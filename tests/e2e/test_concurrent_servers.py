"""Four mcp_serve processes on one database at once: the normal case of four agent windows.

They start together on a database that does not exist yet (so they race to create and migrate
it), then each writes records through the guarded workflow (resolve_record -> prepare_write ->
commit_write) as fast as it can. Nothing may be lost or doubled, no call may fail with a
storage error, and no process may log "database is locked".
"""

from __future__ import annotations

import uuid

import anyio
import pytest
from mcp import ClientSession

from tests.e2e.server import base_env, call_ok, envelope, mcp_session, seed

pytestmark = pytest.mark.slow

SERVERS = 4
RECORDS_PER_SERVER = 12
# A commit goes stale when another process changed what its review depended on; an agent then
# reviews again. Only this worker writes its collection, so retries should be rare.
MAX_ATTEMPTS = 5


async def create_record(session: ClientSession, collection_id: str, title: str) -> None:
    for _ in range(MAX_ATTEMPTS):
        review = await call_ok(
            session, "resolve_record", {"query": title, "collection_id": collection_id}
        )
        assert review["status"] == "no_match", f"{title!r} resolved as {review['status']}"
        prepared = await call_ok(
            session,
            "prepare_write",
            {
                "operation": "create_record",
                "arguments": {"collection_id": collection_id, "title": title, "data": {}},
                "review_ids": [review["resolution_id"]],
                "decision_reason": "concurrency test: a new record",
            },
        )
        reply = envelope(
            await session.call_tool("commit_write", {"action_id": prepared["action_id"]})
        )
        if reply["ok"]:
            assert reply["result"]["status"] == "committed", reply
            return
        assert reply["error"]["code"] == "STALE_REVIEW", f"commit of {title!r} failed: {reply}"
    pytest.fail(f"{title!r} still stale after {MAX_ATTEMPTS} attempts")


def test_four_servers_writing_at_once_lose_nothing(new_server_database, tmp_path):
    env = base_env(**new_server_database)
    names = [f"ledger {letter}" for letter in "wxyz"[:SERVERS]]
    logs = [tmp_path / f"server-{index}.log" for index in range(SERVERS)]
    written: dict[str, list[str]] = {}
    listed: dict[str, list[str]] = {}

    async def worker(index: int, started: list[anyio.Event], go: anyio.Event, ids: dict):
        with open(logs[index], "w") as log:
            async with mcp_session(env, log) as (session, _):
                started[index].set()
                await go.wait()
                collection_id = ids[names[index]]
                titles = [uuid.uuid4().hex for _ in range(RECORDS_PER_SERVER)]
                for title in titles:
                    await create_record(session, collection_id, title)
                written[collection_id] = titles
                page = await call_ok(
                    session, "search_records", {"collection_id": collection_id, "limit": 100}
                )
                listed[collection_id] = [record["title"] for record in page["records"]]

    async def scenario():
        started = [anyio.Event() for _ in range(SERVERS)]
        go = anyio.Event()
        ids: dict[str, str] = {}
        with anyio.fail_after(240):
            async with anyio.create_task_group() as workers:
                for index in range(SERVERS):
                    workers.start_soon(worker, index, started, go, ids)
                for event in started:
                    await event.wait()
                ids.update(await anyio.to_thread.run_sync(seed, env, "--collections", *names))
                go.set()

    anyio.run(scenario)

    assert len(written) == SERVERS
    for collection_id, titles in written.items():
        assert sorted(listed[collection_id]) == sorted(titles), "records lost or doubled"
    for log in logs:
        text = log.read_text()
        assert "database is locked" not in text, f"{log.name}:\n{text}"
        assert "Traceback" not in text, f"{log.name}:\n{text}"
