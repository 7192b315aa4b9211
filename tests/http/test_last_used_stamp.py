"""The token's last-used stamp never makes a request wait: with another writer holding the lock,
a call is answered at once and the stamp is simply left for a later request.

Against the production server, on its own SQLite file (another process holds the database's
write lock) or on PostgreSQL (another transaction holds the token's row).
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
from tests.liveness import PROMPT_REPLY_S

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
HEADERS = {"Accept": "application/json, text/event-stream"}
LONG_AGO = "2000-01-01 00:00:00+00:00"


def database(server: LiveServer) -> Any:
    if ON_POSTGRES:
        import psycopg
        from django.db import connection

        return psycopg.connect(postgres_url(connection.settings_dict), autocommit=True)
    return sqlite3.connect(server.env["ANCHOR_DB_PATH"], isolation_level=None)


@contextmanager
def another_writer(server: LiveServer, prefix: str) -> Iterator[None]:
    db = database(server)
    try:
        if ON_POSTGRES:
            db.execute("BEGIN")
            db.execute("SELECT 1 FROM records_accesstoken WHERE prefix = %s FOR UPDATE", [prefix])
        else:
            db.execute("BEGIN IMMEDIATE")  # SQLite's one write lock, as a long import holds it
        yield
    finally:
        db.execute("ROLLBACK")
        db.close()


def last_used(server: LiveServer, prefix: str) -> Any:
    db = database(server)
    try:
        mark = "%s" if ON_POSTGRES else "?"
        row = db.execute(
            f"SELECT last_used_at FROM records_accesstoken WHERE prefix = {mark}", [prefix]
        ).fetchone()
        return row[0]
    finally:
        db.close()


def age_the_stamp(server: LiveServer, prefix: str) -> None:
    db = database(server)
    try:
        mark = "%s" if ON_POSTGRES else "?"
        db.execute(
            f"UPDATE records_accesstoken SET last_used_at = {mark} WHERE prefix = {mark}",
            [LONG_AGO, prefix],
        )
    finally:
        db.close()


def test_a_held_lock_does_not_delay_a_call(live: LiveServer):  # noqa: F811
    token = live.token_for("alice", "team-a")
    prefix = token.split("_")[1]
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    opened = httpx.post(
        f"{live.url}/mcp",
        headers=auth,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "stamp-test", "version": "1"},
            },
        },
    )
    assert opened.status_code == 200
    session = {**auth, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
    httpx.post(
        f"{live.url}/mcp",
        headers=session,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    age_the_stamp(live, prefix)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

    with another_writer(live, prefix):
        started = time.monotonic()
        answered = httpx.post(f"{live.url}/mcp", headers=session, json=ping, timeout=30)
        took = time.monotonic() - started
    assert answered.status_code == 200, answered.text
    assert took < PROMPT_REPLY_S, f"the ping waited {took:.2f} s for the lock"
    assert str(last_used(live, prefix)).startswith("2000-01-01"), "skipped, not waited for"

    assert httpx.post(f"{live.url}/mcp", headers=session, json=ping).status_code == 200
    assert not str(last_used(live, prefix)).startswith("2000-01-01"), "stamped once free"
