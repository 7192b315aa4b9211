"""Team mode on PostgreSQL holds at most its pool's connections, however many clients call.

Against the production server (gunicorn, one worker, ANCHOR_DB_POOL_SIZE=2). Twelve commits
are sent at once while another connection holds every prepared action's row, so each commit
that gets a connection waits on its lock: the server must be holding two connections, not
twelve, with the other requests queued for one. Once the lock goes, every commit applies. A
connection goes back to the pool without its last call's tag (application_name), so a late
cancel of that call cannot stop whatever the connection serves next.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from tests.e2e.server import postgres_url
from tests.http.shared_server import serve_shared
from tests.http.test_client_departure import Client, create_people
from tests.http.test_live_server import LiveServer
from tests.polling import lock_waiters, server_has_read, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,  # the pool is PostgreSQL's (SQLite has none)
    pytest.mark.django_db(transaction=True),
]
POOL_SIZE = 2
COMMITS = 12


@pytest.fixture
def pooled(tmp_path):
    yield from serve_shared(tmp_path, workers=1, ANCHOR_DB_POOL_SIZE=str(POOL_SIZE))


def prepare_creates(client: Client, count: int) -> list[str]:
    collection_id = create_people(client, "pool test")
    action_ids = []
    for index in range(count):
        title = f"Person {index}"
        review = client.ok("resolve_record", {"query": title, "collection_id": collection_id})
        prepared = client.ok(
            "prepare_write",
            {
                "operation": "create_record",
                "arguments": {"collection_id": collection_id, "title": title, "data": {}},
                "review_ids": [review["resolution_id"]],
                "decision_reason": "pool test",
            },
        )
        action_ids.append(prepared["action_id"])
    return action_ids


def server_backends(*, exclude: int) -> list[tuple[str, str]]:
    """(state, application_name) of every other client connection to the test database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT state, application_name FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid() AND pid <> %s",
            [exclude],
        )
        return cursor.fetchall()


def waiting_on_the_lock() -> int:
    with connection.cursor() as cursor:
        return lock_waiters(cursor)


def all_idle(backends: list[tuple[str, str]]) -> bool:
    return all(state == "idle" for state, _ in backends)


def test_the_server_holds_at_most_its_pool_and_queues_the_rest(pooled: LiveServer):
    token = pooled.token_for("alice", "team-a")
    action_ids = prepare_creates(Client(pooled, token), COMMITS)
    clients = [Client(pooled, token) for _ in action_ids]
    replies: dict[str, Any] = {}

    def commit(client: Client, action_id: str) -> None:
        replies[action_id] = client.ok("commit_write", {"action_id": action_id}, timeout=60)

    holder = psycopg.connect(postgres_url(connection.settings_dict))
    try:
        holder.execute("SELECT 1 FROM workflow_preparedaction FOR UPDATE")
        threads = [
            threading.Thread(target=commit, args=pair)
            for pair in zip(clients, action_ids, strict=True)
        ]
        for thread in threads:
            thread.start()
        # Every connection the server may hold is taken, waiting on the lock, and the server
        # has read every commit (each would open a connection of its own if the pool let it,
        # and be seen here waiting on the lock too).
        wait_until(lambda: waiting_on_the_lock() >= POOL_SIZE, "the pool's commits to wait")
        port = urlsplit(pooled.url).port
        assert port
        wait_until(lambda: server_has_read(port, COMMITS), "the server to read every commit")
        during = server_backends(exclude=holder.info.backend_pid)
    finally:
        holder.rollback()
        holder.close()
    for thread in threads:
        thread.join(timeout=60)
    assert len(during) <= POOL_SIZE, f"the server held {len(during)} connections: {during}"
    assert sum(state == "active" for state, _ in during) == POOL_SIZE, during
    assert sorted(replies) == sorted(action_ids)
    assert all(reply["status"] == "committed" for reply in replies.values())

    def back_in_the_pool_untagged() -> list[tuple[str, str]] | None:
        # A connection goes idle after the call's last statement and is untagged when the pool
        # takes it back, a moment later: wait for both, and fail if the tag is never cleared.
        backends = server_backends(exclude=0)
        untagged = all(name == "" for _, name in backends)
        return backends if backends and all_idle(backends) and untagged else None

    wait_until(
        back_in_the_pool_untagged,
        "every connection back in the pool with its call's tag cleared",
    )


@pytest.fixture
def one_connection(tmp_path):
    yield from serve_shared(
        tmp_path, workers=1, ANCHOR_DB_POOL_SIZE="1", ANCHOR_DB_POOL_TIMEOUT_S="1"
    )


def test_a_request_finding_no_free_connection_is_told_to_retry(one_connection: LiveServer):
    token = one_connection.token_for("alice", "team-a")
    (action_id,) = prepare_creates(Client(one_connection, token), 1)
    waiting, late = Client(one_connection, token), Client(one_connection, token)
    holder = psycopg.connect(postgres_url(connection.settings_dict))
    try:
        holder.execute("SELECT 1 FROM workflow_preparedaction FOR UPDATE")
        thread = threading.Thread(
            target=lambda: waiting.ok("commit_write", {"action_id": action_id}, timeout=60)
        )
        thread.start()
        wait_until(lambda: waiting_on_the_lock() == 1, "the commit to wait on the lock")
        refused = late.post("tools/call", {"name": "get_server_instructions", "arguments": {}})
    finally:
        holder.rollback()
        holder.close()
    thread.join(timeout=60)
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"] == "5"
    assert refused.json()["id"] == late.next_id - 1, "the 503 answers the request's own id"
    error = refused.json()["error"]
    assert error["code"] == -32603 and "Retry after 5 seconds" in error["message"]
    # Busy, not broken: the cause is the pool's, and the database is never blamed.
    assert error["data"] == {"cause": "at_capacity"}, error
    assert "at capacity" in error["message"] and "reach" not in error["message"], error
    assert "Traceback" not in refused.text
    # Once the connection is free again, the same client is served.
    assert late.ok("get_server_instructions", {})
