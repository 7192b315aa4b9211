"""The request-body limits: its size, applied at the ASGI level so an oversized body is never
read, and its JSON members, counted before parsing.

Django's ASGI handler reads the whole body before any middleware runs. Here a Content-Length over
ANCHOR_HTTP_MAX_BODY_BYTES is answered 413 from the headers alone, and a chunked body is cut off
as soon as it passes the limit; the reply says `Connection: close`, so the rest is not read.

Parsing JSON costs per member (object key or array element: 200,000 keys took a hundred times as
long as the same bytes in one string), so /mcp refuses a body with more members than any tool
call needs (`too_many_members`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from django.conf import settings

# JSON-RPC 2.0's code; what the MCP SDK answers an oversized message with.
from workflow.mcp.jsonrpc import INVALID_REQUEST, error_body

Scope = dict[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_MEMBERS = 50_000
_STRING = re.compile(rb'"[^"]*"')


def _separators(body: bytes) -> int:
    # Each member but a container's first follows a comma: an upper bound on the members.
    return body.count(b",") + body.count(b"[") + body.count(b"{")


def too_many_members(body: bytes) -> bool:
    # Exact but for commas and brackets inside strings: most bodies are settled here.
    if _separators(body) <= MAX_MEMBERS:
        return False
    # Without its escaped backslashes and quotes (read in pairs from the left, as a parser
    # does), every string is two quotes with none between: all found in C, none in Python.
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    # A member brings at most two strings (a key and its value): more strings than twice the
    # limit settle it without reading them.
    if plain.count(b'"') // 2 > 2 * MAX_MEMBERS:
        return True
    return _separators(_STRING.sub(b"", plain)) > MAX_MEMBERS


def too_large_message(limit: int, length: int | None = None) -> str:
    size = "The request body is" + (f" {length} bytes," if length is not None else "") + " over"
    return (
        f"{size} the limit of {limit} (ANCHOR_HTTP_MAX_BODY_BYTES); nothing was done. Split "
        "the call (for example, import in smaller batches)."
    )


def declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the HTTP server refuses a malformed length before we are called
    return None


async def refuse_too_large(send: Send, limit: int, length: int | None) -> None:
    # A JSON-RPC error, the shape /mcp answers every transport-level refusal in.
    body = json.dumps(error_body(None, INVALID_REQUEST, too_large_message(limit, length))).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


class BodyLimit:
    """Wraps an ASGI application; HTTP requests over the body limit never reach it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.ANCHOR_HTTP_MAX_BODY_BYTES
        length = declared_length(scope)
        if length is not None and length > limit:
            await refuse_too_large(send, limit, length)
            return
        received = 0
        cut_off = False
        started = False

        async def counted_receive() -> Message:
            nonlocal received, cut_off
            if cut_off:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # The application sees the client go away and stops (Django's handler
                    # returns without answering); the refusal is sent below instead.
                    cut_off = True
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, watched_send)
        if cut_off and not started:
            await refuse_too_large(send, limit, None)
