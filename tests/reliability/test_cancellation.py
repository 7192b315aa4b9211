"""notifications/cancelled over stdio: a call cancelled before it commits writes nothing and
gets no reply; a call that already committed stays committed, and replaying it says so.

The cancel the clients send when a person presses stop, or at their 60 s default timeout,
usually lands while the call waits for the database: another process holds SQLite's write lock
(or the PostgreSQL row lock) here, exactly as in that case.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.polling import holds_throughout, wait_until
from tests.reliability import flows
from tests.reliability.harness import CALL_BEGAN, RawServer, Store, running

pytestmark = pytest.mark.django_db(transaction=True)


def cancel(server: RawServer, request_id: int) -> None:
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "the person pressed stop"},
        }
    )


def prepared_create(server: RawServer, collection_id: str, title: str) -> str:
    review = server.ok("resolve_record", {"query": title, "collection_id": collection_id})
    prepared = server.ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": {"n": 1}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "cancellation test",
        },
    )
    return prepared["action_id"]


@contextmanager
def commit_blocked(store: Store, action_id: str) -> Iterator[None]:
    """Another writer holds what this action's commit must take first: SQLite's write lock,
    or on PostgreSQL the prepared action's row."""
    if store.vendor == "sqlite":
        holder: Any = sqlite3.connect(store.path, timeout=5, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    else:
        import psycopg

        holder = psycopg.connect(store.url)
        holder.execute(
            "SELECT 1 FROM workflow_preparedaction WHERE id = %s FOR UPDATE", (action_id,)
        )
    try:
        yield
    finally:
        holder.rollback() if store.vendor == "postgresql" else holder.execute("ROLLBACK")
        holder.close()


def replies_until_pong(server: RawServer) -> list[dict[str, Any]]:
    """Everything the server sends up to and including the reply to a fresh ping."""
    ping = server.request("ping")
    seen = []
    while True:
        message = server.read_message(30)
        assert message is not None, "no reply to ping"
        seen.append(message)
        if message.get("id") == ping:
            return seen


def test_a_commit_cancelled_while_waiting_for_the_lock_writes_nothing_and_gets_no_reply(
    server_env, store: Store, tmp_path
):
    # A statement's own time limit also ends a lock wait: far above the polls here, so that
    # only the cancel can end this one.
    env = {**server_env, "ANCHOR_QUERY_TIMEOUT_S": "600"}
    log = tmp_path / "server.log"
    with running(env, log) as server:
        collection_id = flows.create_collection(server, f"cancel-{uuid.uuid4().hex[:6]}")
        action_id = prepared_create(server, collection_id, "never committed")

        with commit_blocked(store, action_id):
            began = log.read_bytes().count(CALL_BEGAN)
            commit = server.send_call("commit_write", {"action_id": action_id})
            if store.vendor == "postgresql":
                wait_until(lambda: store.lock_waiters() >= 1, "the commit to wait on the lock")
            else:
                # SQLite's busy wait shows nowhere: the call has reached its handler, and
                # takes the write lock first thing, within milliseconds.
                wait_until(lambda: log.read_bytes().count(CALL_BEGAN) > began, "the commit")
            cancel(server, commit)
            if store.vendor == "postgresql":
                # The cancel stops the statement at once, while the lock is still held.
                wait_until(lambda: store.lock_waiters() == 0, "the cancelled commit to stop")
            else:
                # Messages are read in order: once a later ping is answered, the cancel has
                # been handled, and the call's bound is set before the lock is let go.
                assert server.reply_to(server.request("ping"), timeout=30)["result"] == {}
        if store.vendor == "sqlite":
            # SQLite's wait for its write lock cannot be interrupted: the call takes the lock
            # on its busy handler's next try (at most 100 ms apart) and must roll back rather
            # than apply. A second is many such tries.
            unapplied = holds_throughout(lambda: store.action_state(action_id) == "prepared", 1)
            assert unapplied, "the cancelled commit was applied"
        # The lock is free: a call that ignored the cancel would commit now.
        replies = replies_until_pong(server)
        assert [m for m in replies if m.get("id") == commit] == [], replies
        assert store.action_state(action_id) == "prepared"
        assert store.written_by_action(action_id)["records"] == 0
        assert (
            store.value("SELECT count(*) FROM records_record WHERE title = ?", ("never committed",))
            == 0
        )

        # Nothing was lost either: the same action_id commits once asked again.
        again = server.ok("commit_write", {"action_id": action_id})
        assert again["status"] == "committed" and "replayed" not in again


def test_a_cancel_after_the_commit_leaves_it_committed_and_replay_says_so(
    server_env, store: Store, tmp_path
):
    with running(server_env, tmp_path / "server.log") as server:
        collection_id = flows.create_collection(server, f"late-{uuid.uuid4().hex[:6]}")
        action_id = prepared_create(server, collection_id, "committed before the cancel")
        commit = server.send_call("commit_write", {"action_id": action_id})
        reply = server.reply_to(commit)
        cancel(server, commit)  # too late: the request is answered and committed
        assert reply["result"]["structuredContent"]["result"]["status"] == "committed"
        replayed = server.ok("commit_write", {"action_id": action_id})
        assert replayed["status"] == "committed" and replayed["replayed"] is True
        assert store.written_by_action(action_id)["records"] == 1


def test_json_rpc_rules_on_stdio(server_env, tmp_path):
    with running(server_env, tmp_path / "server.log") as server:
        info = server.initialize_result
        assert info["serverInfo"]["name"] == "anchor"
        assert info["serverInfo"]["version"] == anchor_version()

        again = server.reply_to(
            server.request(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "again", "version": "1"},
                },
            )
        )
        assert (
            again["error"]["code"] == -32600 and "already initialized" in again["error"]["message"]
        )

        server.send({"jsonrpc": "2.0", "id": None, "method": "ping"})
        null_id = server.read_message(10)
        assert null_id is not None and null_id["id"] is None
        assert null_id["error"]["code"] == -32600

        unknown = server.reply_to(server.request("no/such/method"))
        assert unknown["error"]["code"] == -32601

        resource = server.reply_to(server.request("resources/read", {"uri": "anchor://nothing"}))
        assert resource["error"]["code"] == -32602 and resource["error"]["message"]
        prompt = server.reply_to(server.request("prompts/get", {"name": "no-such-prompt"}))
        assert prompt["error"]["code"] == -32602 and prompt["error"]["message"]


def anchor_version() -> str:
    from django.conf import settings

    return settings.ANCHOR_VERSION
