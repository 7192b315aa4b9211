"""notifications/cancelled over HTTP: the cancelled call writes nothing and is not answered.

django-mcp-server runs the SDK stateless, so the cancel arrives as a POST of its own, on any
worker. The call is found by session and JSON-RPC id: in the same process directly, and in
another one through its PostgreSQL statement (tagged with the same name). On SQLite a cancel
can only reach a call in its own process, so that case runs one worker.

Against the production server; the commit waits for what another writer holds, as in the
stdio cancellation tests, and must not apply when the writer lets go.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from tests.http.shared_server import module_server
from tests.http.test_client_departure import UNBOUNDED, Client, commit_blocked, prepared_create
from tests.http.test_live_server import ON_POSTGRES, LiveServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]

# Several workers on PostgreSQL: the cancel may land on either, and must work from both.
server = module_server(workers=2 if ON_POSTGRES else 1, **UNBOUNDED)


def cancel(client: Client, request_id: int) -> httpx.Response:
    return httpx.post(
        client.url,
        headers=client.headers,
        json={
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "the person pressed stop"},
        },
        timeout=30,
    )


@pytest.mark.parametrize("attempt", range(3))
def test_a_cancelled_commit_writes_nothing_and_gets_no_reply(server: LiveServer, attempt):
    client = Client(server, server.token_for("alice", "team-a"))
    action_id = prepared_create(client)
    answered: dict[str, Any] = {}
    commit_id = client.next_id

    def commit() -> None:
        answered["response"] = client.post(
            "tools/call", {"name": "commit_write", "arguments": {"action_id": action_id}}
        )

    with commit_blocked(server, action_id) as blocked:
        waiting = threading.Thread(target=commit)
        waiting.start()
        blocked.until_the_commit_waits()
        assert cancel(client, commit_id).status_code == 202
        if ON_POSTGRES:
            # The lock wait is a statement, and the cancel stops it at once.
            waiting.join(timeout=20)
            assert not waiting.is_alive(), "the cancelled commit is still waiting"
    # SQLite's wait for its write lock cannot be interrupted: the call ends, rolled back, as
    # soon as the lock is free.
    waiting.join(timeout=30)
    assert not waiting.is_alive(), "the cancelled commit never ended"
    response = answered["response"]
    assert response.status_code == 202 and response.content == b"", response.text
    replay = client.ok("commit_write", {"action_id": action_id})
    assert replay["status"] == "committed"
    assert "replayed" not in replay, "the cancelled commit was applied"


def test_a_cancel_for_another_session_or_no_call_changes_nothing(server: LiveServer):
    client = Client(server, server.token_for("alice", "team-a"))
    assert cancel(client, 12345).status_code == 202  # nothing runs with that id: a no-op
    other = Client(server, server.token_for("bob", "team-a"))
    action_id = prepared_create(client)
    commit_id = client.next_id
    answered: dict[str, Any] = {}

    def commit() -> None:
        answered["response"] = client.post(
            "tools/call", {"name": "commit_write", "arguments": {"action_id": action_id}}
        )

    with commit_blocked(server, action_id) as blocked:
        waiting = threading.Thread(target=commit)
        waiting.start()
        blocked.until_the_commit_waits()
        # Bob's session has the same request ids; his cancel must not reach Alice's call.
        assert cancel(other, commit_id).status_code == 202
        # A cancel is handled before its 202 is sent: had this one reached Alice's call, that
        # call would be stopping now, and end unanswered or failed instead of committing below.
        assert waiting.is_alive(), "another session's cancel stopped the call"
    waiting.join(timeout=30)
    response = answered["response"]
    assert response.status_code == 200 and response.content, "another session's cancel landed"
    done = response.json()["result"]["structuredContent"]
    assert done["ok"] and done["result"]["status"] == "committed"
