"""Slow clients cannot starve the production server: 50 connections that send headers and part
of a body, then stall, do not delay a healthy client's calls past 1 s.

Under the previous threaded server each stalled body held a worker thread for as long as the
connection stayed open, so a handful of them stopped everyone; the ASGI workers read bodies on
the event loop and give a thread only to a request that has fully arrived.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.http.shared_server import module_server
from tests.http.test_live_server import ON_POSTGRES, LiveServer
from tests.polling import server_has_read, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
STALLED = 50
HEADERS = {"Accept": "application/json, text/event-stream"}

live = module_server(workers=2)


def stall(url: str, token: str) -> socket.socket:
    """A POST that promises 2,000 bytes of body, sends 20, and goes quiet."""
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
    sock.sendall(
        (
            "POST /mcp HTTP/1.1\r\n"
            f"Host: {parts.hostname}\r\n"
            f"Authorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\n"
            f"Accept: {HEADERS['Accept']}\r\n"
            "Content-Length: 2000\r\n\r\n"
            '{"jsonrpc": "2.0", '
        ).encode()
    )
    return sock


def timed(call) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = call()
    return time.monotonic() - started, response


def test_fifty_stalled_bodies_do_not_delay_a_healthy_client(live: LiveServer):
    token = live.token_for("alice", "team-a")
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "healthy", "version": "1"},
        },
    }
    # Warm both workers (first requests import the tool layer) before measuring.
    for _ in range(4):
        assert httpx.post(f"{live.url}/mcp", headers=auth, json=initialize).status_code == 200

    stalled = [stall(live.url, token) for _ in range(STALLED)]
    try:
        port = urlsplit(live.url).port
        assert port
        wait_until(
            lambda: server_has_read(port, STALLED),
            "every stalled request to be accepted and waiting for its body",
        )
        took_open, opened = timed(
            lambda: httpx.post(f"{live.url}/mcp", headers=auth, json=initialize, timeout=10)
        )
        assert opened.status_code == 200, opened.text
        session = {**auth, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
        httpx.post(
            f"{live.url}/mcp",
            headers=session,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            timeout=10,
        )
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_collections", "arguments": {}},
        }
        took_call, answered = timed(
            lambda: httpx.post(f"{live.url}/mcp", headers=session, json=call, timeout=10)
        )
        assert answered.status_code == 200, answered.text
        assert '"ok":true' in answered.text.replace(" ", "")
        print(
            f"with {STALLED} stalled bodies: initialize {took_open:.3f} s, call {took_call:.3f} s"
        )
        # Answered while every stalled request is still open and unanswered: the healthy
        # client did not wait for any of them to time out (the times above are figures only).
        for sock in stalled:
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
    finally:
        for sock in stalled:
            sock.close()
    assert "Traceback" not in live.log.read_text()
