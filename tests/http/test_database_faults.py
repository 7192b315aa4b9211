"""Team mode on PostgreSQL rides out the database's faults, and says which one it met.

Against the production server (gunicorn, uvicorn workers, the psycopg pool). A connection the
database ended (pg_terminate_backend, as a restart or an administrator does) is checked before
it is handed out and replaced, so clients see at most one failed call, and that one says to
retry. When no connection can be had, the 503 names the cause: "at capacity" only when every
connection is busy (tests/http/test_connection_pool.py), and its own message when the
database refuses connections; once it accepts them again the same server serves the next call.
A database made read-only refuses writes in JSON at every door, and once writable again the very
next write succeeds: no connection opened or failed in the read-only spell is handed out again.
Only this test's database is touched: backends are chosen by its name, never another's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest
from django.db import connection

from tests.e2e.server import postgres_url
from tests.http.shared_server import serve_shared
from tests.http.test_client_departure import Client, create_people
from tests.http.test_live_server import ON_POSTGRES, LiveServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(not ON_POSTGRES, reason="the pool and its faults are PostgreSQL's"),
    pytest.mark.django_db(transaction=True),
]
CLIENTS = 6


def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, the envelope or the JSON-RPC error) of one tools/call."""
    response = client.post("tools/call", {"name": name, "arguments": arguments})
    body = response.json()
    if response.status_code != 200:
        return response.status_code, body["error"]
    return 200, body["result"]["structuredContent"]


def terminate_the_servers_backends() -> int:
    """End every other session on this test's database (the server's); this one stays."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def in_parallel(clients: list[Client], work: Any) -> None:
    threads = [threading.Thread(target=work, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)


@pytest.fixture
def two_workers(tmp_path) -> Iterator[LiveServer]:
    yield from serve_shared(tmp_path, workers=2)


def test_terminated_backends_cost_at_most_one_call(two_workers: LiveServer):
    token = two_workers.token_for("alice", "team-a")
    clients = [Client(two_workers, token) for _ in range(CLIENTS)]
    people = create_people(clients[0], "database faults")
    search = {"query": "Priya", "collection_id": people}

    def warm(client: Client) -> None:  # enough at once that each worker's pool grows
        for _ in range(3):
            assert call(client, "search_records", search)[0] == 200

    in_parallel(clients, warm)
    assert terminate_the_servers_backends() >= 2, "the server had fewer connections than that"

    replies: list[tuple[int, dict[str, Any]]] = []

    def after(client: Client) -> None:
        for _ in range(4):
            replies.append(call(client, "search_records", search))

    in_parallel(clients, after)
    assert len(replies) == 4 * CLIENTS
    failed = [(status, body) for status, body in replies if status != 200 or not body["ok"]]
    print(f"\nfailed calls after terminating the server's backends: {len(failed)}")
    assert len(failed) <= 1, f"more than one call failed: {failed}"
    for status, body in failed:
        message = body["message"] if status != 200 else body["error"]["message"]
        assert "Retry" in message, body


@contextmanager
def database_refusing_connections() -> Iterator[None]:
    """This test's database takes no new connection (even a superuser's), and the server's
    sessions are ended: as a database that is down looks to the server. Put back after.

    PostgreSQL lets only a session on another database say so: the maintenance database."""
    settings = connection.settings_dict
    name = psycopg.sql.Identifier(settings["NAME"])
    connection.ensure_connection()  # this test's own session, opened while it still may be
    with psycopg.connect(postgres_url({**settings, "NAME": "postgres"}), autocommit=True) as admin:
        admin.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(name))
        try:
            assert terminate_the_servers_backends() >= 1, "the server had no connection"
            yield
        finally:
            admin.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(name))


@pytest.fixture
def quick_timeout(tmp_path) -> Iterator[LiveServer]:
    yield from serve_shared(tmp_path, workers=1, ANCHOR_DB_POOL_TIMEOUT_S="2")


def test_a_database_refusing_connections_gets_its_own_503_then_the_next_call_is_served(
    quick_timeout: LiveServer,
):
    token = quick_timeout.token_for("alice", "team-a")
    client = Client(quick_timeout, token)
    assert call(client, "get_server_instructions", {})[0] == 200

    with database_refusing_connections():
        refused = client.post("tools/call", {"name": "get_server_instructions", "arguments": {}})
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"] == "5"
    assert refused.json()["id"] == client.next_id - 1, "the 503 answers the request's own id"
    error = refused.json()["error"]
    assert error["code"] == -32603 and error["data"] == {"cause": "unreachable"}, error
    assert "cannot reach its database" in error["message"], error
    assert "at capacity" not in error["message"], error
    assert "Retry after 5 seconds" in error["message"], error

    # Accepting connections again: the pool reconnects on its own schedule (it backs off
    # while the database refuses), so wait for the first served call, each refusal meanwhile
    # still saying why.
    deadline = time.monotonic() + 90
    while (reply := call(client, "get_server_instructions", {}))[0] != 200:
        assert reply[0] == 503 and reply[1]["data"]["cause"] == "unreachable", reply
        assert time.monotonic() < deadline, "the server did not reconnect within 90 s"
    assert reply[1]["ok"], reply
    log = quick_timeout.log.read_text()
    assert "an /mcp request met a database fault (unreachable)" in log
    assert "Traceback" not in log, log[-3000:]


@contextmanager
def read_only_database() -> Iterator[None]:
    """New sessions on this test's database start read-only (the server's are ended, so its
    pool reconnects read-only); put back after. This test's own session stays writable."""
    settings = connection.settings_dict
    name = psycopg.sql.Identifier(settings["NAME"])
    connection.ensure_connection()
    # From the maintenance database: ending the server's sessions must not end this one.
    with psycopg.connect(postgres_url({**settings, "NAME": "postgres"}), autocommit=True) as admin:
        admin.execute(
            psycopg.sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(name)
        )
        try:
            terminate_the_servers_backends()
            yield
        finally:
            admin.execute(
                psycopg.sql.SQL("ALTER DATABASE {} RESET default_transaction_read_only").format(
                    name
                )
            )


def initialize(server: LiveServer, token: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/mcp",
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
        json={
            "jsonrpc": "2.0",
            "id": "start-1",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "read-only test", "version": "1"},
            },
        },
        timeout=30,
    )


@pytest.fixture
def small_pool(tmp_path) -> Iterator[LiveServer]:
    yield from serve_shared(tmp_path, workers=1, ANCHOR_DB_POOL_SIZE="2")


def test_a_read_only_database_refuses_in_json_and_the_next_write_after_it_succeeds(
    small_pool: LiveServer,
):
    token = small_pool.token_for("alice", "team-a")
    clients = [Client(small_pool, token) for _ in range(3)]
    people = create_people(clients[0], "read-only database")

    def resolve(client: Client, title: str) -> tuple[int, dict[str, Any]]:
        # A resolution is a write: it stores its review.
        return call(client, "resolve_record", {"query": title, "collection_id": people})

    def read(client: Client) -> None:
        for _ in range(3):
            status, envelope = call(client, "search_records", {"collection_id": people})
            assert status == 200 and envelope["ok"], envelope

    with read_only_database():
        for index in range(3):
            status, refused = resolve(clients[0], f"Refused {index}")
            assert status == 200 and refused["error"]["code"] == "STORAGE_ERROR", refused
            assert refused["error"]["details"] == {"cause": "read_only"}, refused
        # Reads are served, on connections opened read-only that go back into the pool.
        in_parallel(clients, read)
        # A session cannot be stored: a JSON-RPC 503 answering the request's id, never HTML.
        start = initialize(small_pool, token)
        assert start.status_code == 503, start.text
        body = start.json()
        assert body["id"] == "start-1" and body["error"]["data"] == {"cause": "read_only"}, body
        assert start.headers["Retry-After"] == "5"
        # An OAuth door that writes answers JSON too.
        registered = httpx.post(
            f"{small_pool.url}/oauth/register/",
            json={"client_name": "read-only", "redirect_uris": ["http://127.0.0.1:9/cb"]},
            timeout=30,
        )
        assert registered.status_code == 503, registered.text
        assert registered.headers["Content-Type"] == "application/json", registered.headers
        assert registered.json()["cause"] == "read_only", registered.text

    # Writable again: the very next write succeeds, on every client, and sessions start.
    for index, client in enumerate(clients):
        status, healed = resolve(client, f"Healed {index}")
        assert status == 200 and healed["ok"], healed
    assert initialize(small_pool, token).status_code == 200
    log = small_pool.log.read_text()
    assert "an /mcp request met a database fault (read_only)" in log
