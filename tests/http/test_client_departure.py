"""A client that goes away mid-call stops the call: over HTTP as over stdio, a commit whose
client disconnected before it could take its lock writes nothing and gets no reply.

Against the production server (gunicorn's uvicorn workers, as the README runs it). The commit
waits for what another writer holds (SQLite's write lock, or on PostgreSQL the prepared
action's row), the client gives up and disconnects, then the writer lets go: the abandoned
commit must not apply then. Replaying the same action_id afterwards commits it for the first
time, which shows nothing had been written.

The chain that makes it so: Django's ASGI handler sees `http.disconnect` and cancels the
request's task; asgiref carries that cancel into the SDK's handler running the call, and
`workflow.mcp.calls.run_bounded` answers it by interrupting the call's query (its QueryBound),
so the transaction rolls back. Without that last step this test fails.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from tests.e2e.server import postgres_url
from tests.http.test_live_server import ON_POSTGRES, LiveServer, live  # noqa: F401
from tests.polling import lock_waiters, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
HEADERS = {"Accept": "application/json, text/event-stream"}


class Client:
    def __init__(self, server: LiveServer, token: str) -> None:
        self.url = f"{server.url}/mcp"
        self.headers = {**HEADERS, "Authorization": f"Bearer {token}"}
        self.next_id = 1
        opened = self.post(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "departing", "version": "1"},
            },
        )
        self.headers["Mcp-Session-Id"] = opened.headers["Mcp-Session-Id"]
        httpx.post(
            self.url,
            headers=self.headers,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            timeout=30,
        )

    def post(self, method: str, params: dict[str, Any], timeout: float = 30) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        # A client of its own per request: on a timeout it closes, and the server sees it go.
        return httpx.post(self.url, headers=self.headers, json=body, timeout=timeout)

    def ok(self, name: str, arguments: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        response = self.post("tools/call", {"name": name, "arguments": arguments}, timeout)
        assert response.status_code == 200, response.text
        envelope = response.json()["result"]["structuredContent"]
        assert envelope["ok"], envelope
        return envelope["result"]


@contextmanager
def commit_blocked(server: LiveServer, action_id: str) -> Iterator[None]:
    if ON_POSTGRES:
        import psycopg
        from django.db import connection

        holder: Any = psycopg.connect(postgres_url(connection.settings_dict))
        holder.execute(
            "SELECT 1 FROM workflow_preparedaction WHERE id = %s FOR UPDATE", (action_id,)
        )
    else:
        holder = sqlite3.connect(server.env["ANCHOR_DB_PATH"], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.rollback() if ON_POSTGRES else holder.execute("ROLLBACK")
        holder.close()


def until_the_commit_waits() -> None:
    """Until the commit sent under `commit_blocked` waits for what the holder holds."""
    if ON_POSTGRES:
        from django.db import connection

        with connection.cursor() as cursor:
            wait_until(lambda: lock_waiters(cursor) >= 1, "the commit to wait on the lock")
    else:
        time.sleep(1.5)  # a wait for SQLite's write lock shows nowhere outside the server


def create_people(client: Client, reason: str = "departure test") -> str:
    """A "people" collection, made the guarded way; its ID."""
    discovery = client.ok("discover_collections", {"name": "people", "purpose": "People we hire"})
    prepared = client.ok(
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": {
                "name": "people",
                "purpose": "People we hire",
                "record_meaning": "One person",
                "typical_fields": ["email"],
                "relationship_guidance": "",
            },
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": reason,
        },
    )
    created = client.ok("commit_write", {"action_id": prepared["action_id"]})
    return created["result"]["collection"]["collection_id"]


def prepared_create(client: Client) -> str:
    people = create_people(client)
    review = client.ok("resolve_record", {"query": "Priya", "collection_id": people})
    prepared = client.ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": people, "title": "Priya", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "departure test",
        },
    )
    return prepared["action_id"]


def test_a_commit_whose_client_left_writes_nothing(live: LiveServer):  # noqa: F811
    client = Client(live, live.token_for("alice", "team-a"))
    action_id = prepared_create(client)
    with commit_blocked(live, action_id):
        with pytest.raises(httpx.ReadTimeout):
            client.post(
                "tools/call",
                {"name": "commit_write", "arguments": {"action_id": action_id}},
                timeout=2,
            )
        time.sleep(1)  # the server has seen the disconnect and interrupted the wait
    time.sleep(2)  # were the commit still waiting, it would have applied by now
    replay = client.ok("commit_write", {"action_id": action_id})
    assert replay["status"] == "committed"
    assert replay["replayed"] is False, "the abandoned commit was applied after its client left"
    page = client.ok("search_records", {"query": "Priya"})
    assert [r["title"] for r in page["records"]] == ["Priya"]
