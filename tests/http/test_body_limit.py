"""A body over ANCHOR_HTTP_MAX_BODY_BYTES is refused by the production server before it is read.

Raw sockets, because an HTTP client library would send the whole body before reading a reply:
a request declaring 200 MB gets its 413 (a JSON-RPC error) at once and the connection is closed,
so the rest is never taken; a chunked body is cut off at the limit the same way; a body under
the limit is still served.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.http.live_servers import start
from tests.http.test_live_server import ON_POSTGRES, LiveServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=ON_POSTGRES)]
LIMIT = 4 * 1024 * 1024
DECLARED = 200 * 1024 * 1024
HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def live(tmp_path_factory, django_db_setup) -> Iterator[LiveServer]:
    """One server for the file (its start is most of a test's time); each test opens its own
    connections, and the log must stay free of tracebacks across all of them."""
    yield from start(tmp_path_factory.mktemp("body-limit"))


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def request_head(url: str, *headers: str) -> bytes:
    host = urlsplit(url).netloc
    lines = ["POST /mcp HTTP/1.1", f"Host: {host}", "Content-Type: application/json", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails the test).

    A server that closes with unread body bytes still arriving resets the connection instead
    of closing it; what it sent before the reset is its reply (none at all fails the test).
    """
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        if not received:
            raise
    return received


def split_reply(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def assert_too_large(raw: bytes) -> str:
    status, headers, body = split_reply(raw)
    assert status == 413, raw[:500]
    assert headers["connection"] == "close"
    reply = json.loads(body)
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None
    assert reply["error"]["code"] == -32600
    message = reply["error"]["message"]
    assert f"the limit of {LIMIT}" in message and "ANCHOR_HTTP_MAX_BODY_BYTES" in message
    return message


def test_a_declared_200_mb_body_is_refused_from_its_headers_and_never_read(live: LiveServer):
    with connect(live.url) as sock:
        started = time.monotonic()
        sock.sendall(request_head(live.url, f"Content-Length: {DECLARED}") + b'{"jsonrpc": ')
        raw = read_until_closed(sock)
        took = time.monotonic() - started
        message = assert_too_large(raw)
        assert f"is {DECLARED} bytes" in message
        assert took < 5, f"the refusal took {took:.1f} s"
        # The server has closed its end: what we still send is refused, not read.
        with pytest.raises(OSError):
            for _ in range(64):
                sock.sendall(b"x" * 1024 * 1024)
    assert "Traceback" not in live.log.read_text()


def test_a_chunked_body_is_cut_off_at_the_limit(live: LiveServer):
    with connect(live.url) as sock:
        sock.sendall(request_head(live.url, "Transfer-Encoding: chunked"))
        piece = b"x" * 65536
        sent = 0
        while sent <= LIMIT:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        # No final chunk: the server must answer without waiting for the end of the body.
        assert_too_large(read_until_closed(sock))
    assert "Traceback" not in live.log.read_text()


def test_a_body_under_the_limit_is_still_served(live: LiveServer):
    token = live.token_for("alice", "team-a")
    padding = "x" * (3 * 1024 * 1024)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "body-limit-tests", "version": "1"},
            "padding": padding,
        },
    }
    response = httpx.post(
        f"{live.url}/mcp",
        json=initialize,
        headers={**HEADERS, "Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text[:300]
