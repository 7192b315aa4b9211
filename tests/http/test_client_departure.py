"""A client that goes away mid-call stops the call: over HTTP as over stdio, a commit whose
client disconnected before it could take its lock writes nothing and gets no reply.

Against the production server (gunicorn's uvicorn workers, as the README runs it). The commit
waits for what another writer holds (SQLite's write lock, or on PostgreSQL the prepared
action's row), the client gives up and disconnects, then the writer lets go: the abandoned
commit must not apply then. Replaying the same action_id afterwards commits it for the first
time, which shows nothing had been written.

The chain that makes it so: Django's ASGI handler sees `http.disconnect` and cancels the
request's task; asgiref carries that cancel into the SDK's handler running the call, and
`workflow.mcp.bounded_calls.run_bounded` answers it by interrupting the call's query (its
QueryBound), so the transaction rolls back. Without that last step this test fails.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.server import postgres_url
from tests.http.shared_server import module_server
from tests.http.test_live_server import ON_POSTGRES, LiveServer
from tests.polling import holds_throughout, lock_waiters, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
HEADERS = {"Accept": "application/json, text/event-stream"}
# The SDK's line as a tools/call reaches its handler (root logger at INFO, to the server log).
CALL_BEGAN = "Processing request of type CallToolRequest"

# A statement's own time limit (10 s by default) also ends a wait for a lock: far above the
# polls here, so that only the server's answer to the departure can end it.
UNBOUNDED = {"ANCHOR_QUERY_TIMEOUT_S": "600"}

live = module_server(workers=2, **UNBOUNDED)


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


class Blocked:
    """What `commit_blocked` holds, and how a test sees the commit it sends wait behind it."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.calls_before = calls_begun(server)

    def until_the_commit_waits(self) -> None:
        """Until the commit sent since the hold began waits for what the holder holds.

        PostgreSQL shows the wait (a statement waiting on a lock). SQLite's busy wait shows
        nowhere outside the server, so this waits for the call to reach the server's handler:
        from there it takes the write lock first thing, within milliseconds.
        """
        if ON_POSTGRES:
            wait_until(lambda: waiting_on_a_lock() >= 1, "the commit to wait on the lock")
        else:
            wait_until(
                lambda: calls_begun(self.server) > self.calls_before,
                "the commit to reach the server",
            )


def calls_begun(server: LiveServer) -> int:
    return server.log.read_text(errors="replace").count(CALL_BEGAN)


def waiting_on_a_lock() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        return lock_waiters(cursor)


@contextmanager
def commit_blocked(server: LiveServer, action_id: str) -> Iterator[Blocked]:
    """Another writer holds what the action's commit must take first: SQLite's write lock,
    or on PostgreSQL the prepared action's row."""
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
        yield Blocked(server)
    finally:
        holder.rollback() if ON_POSTGRES else holder.execute("ROLLBACK")
        holder.close()


def create_people(client: Client, reason: str = "departure test") -> str:
    """A new "people" collection, made the guarded way; its ID.

    Named afresh each time: tests sharing a module's server share its workspaces too.
    """
    name = f"people {uuid.uuid4().hex[:8]}"
    discovery = client.ok("discover_collections", {"name": name, "purpose": "People we hire"})
    prepared = client.ok(
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": {
                "name": name,
                "purpose": "People we hire",
                "record_meaning": "One person",
                "typical_fields": ["email"],
                "relationship_guidance": "",
            },
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": reason,
            # Another test's "people" collection may share the workspace (and the purpose).
            "clarification": "the user wants a collection of its own for this test",
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


def send_and_leave(client: Client, name: str, arguments: dict[str, Any]) -> socket.socket:
    """A tools/call sent on a socket of its own, which the caller closes to leave."""
    parts = urlsplit(client.url)
    assert parts.hostname and parts.port
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": client.next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    ).encode()
    client.next_id += 1
    headers = {**client.headers, "Content-Type": "application/json"}
    head = "".join(f"{key}: {value}\r\n" for key, value in headers.items())
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.hostname}\r\n{head}"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def action_state(server: LiveServer, action_id: str) -> str:
    """SQLite: the prepared action's state, read from the server's file."""
    store = sqlite3.connect(server.env["ANCHOR_DB_PATH"], isolation_level=None)
    try:
        query = "SELECT state FROM workflow_preparedaction WHERE id = ?"
        return store.execute(query, (action_id,)).fetchone()[0]
    finally:
        store.close()


def test_a_commit_whose_client_left_writes_nothing(live: LiveServer):
    client = Client(live, live.token_for("alice", "team-a"))
    action_id = prepared_create(client)
    with commit_blocked(live, action_id) as blocked:
        sock = send_and_leave(client, "commit_write", {"action_id": action_id})
        blocked.until_the_commit_waits()
        sock.close()  # the client goes away while its commit waits
        if ON_POSTGRES:
            # The server saw the client go and interrupted the commit's wait for the lock,
            # which is still held: a commit that kept waiting would apply once it is let go.
            wait_until(lambda: waiting_on_a_lock() == 0, "the abandoned commit to stop waiting")
    if not ON_POSTGRES:
        # SQLite's wait for its write lock cannot be interrupted, and shows nowhere: the
        # abandoned commit takes the lock on its busy handler's next try (at most 100 ms
        # apart) and must roll back rather than apply. A second is many such tries.
        unapplied = holds_throughout(lambda: action_state(live, action_id) == "prepared", 1.0)
        assert unapplied, "the abandoned commit was applied after its client left"
    replay = client.ok("commit_write", {"action_id": action_id})
    assert replay["status"] == "committed"
    assert "replayed" not in replay, "the abandoned commit was applied after its client left"
    page = client.ok("search_records", {"query": "Priya"})
    assert [r["title"] for r in page["records"]] == ["Priya"]
