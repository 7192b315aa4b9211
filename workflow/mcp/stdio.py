"""The stdio side of mcp_serve: guard the protocol streams and move JSON-RPC lines over them.

stdout belongs to the protocol alone. We take private copies of fd 0 and fd 1 before serving and
point the originals at stderr and /dev/null, so a stray print(), a library banner or an input()
prompt can never interleave bytes with a JSON-RPC message or swallow one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import re
import signal
import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from asgiref.sync import sync_to_async
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from workflow.mcp.arguments import plain_json_refusal

# The transport answers these itself: the SDK's session sends nothing at all for a line it
# cannot parse (only a log notification), and -32602 for an unknown method.
from workflow.mcp.jsonrpc import (
    CLIENT_METHODS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    error_body,
)

logger = logging.getLogger("anchor.stdio")

READ_CHUNK = 64 * 1024

# After end of input or SIGTERM, how long a running tool call (whose reply cannot be sent) may
# keep the process before it is abandoned and rolled back: within a client's 2 s to SIGKILL.
ABANDON_AFTER = 0.5
# After end of input, how long replies still owed may take to be written.
OUTPUT_GRACE_S = 1.0
# Recovering the id of a line that failed to parse scans tokens; give up on pathological input.
MAX_ID_SCAN_TOKENS = 200_000
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


@dataclass(frozen=True)
class ProtocolPipe:
    """Private descriptors for the JSON-RPC stream; nothing else in the process holds them."""

    input_fd: int
    output_fd: int


_claimed: ProtocolPipe | None = None


def claim_stdio_for_protocol() -> ProtocolPipe:
    """Keep the real stdin/stdout for JSON-RPC; fd 1 becomes stderr and fd 0 /dev/null.
    Idempotent: manage.py claims before Django loads anything, and the command again."""
    global _claimed
    if _claimed is not None:
        return _claimed
    sys.stdout.flush()
    pipe = ProtocolPipe(input_fd=os.dup(0), output_fd=os.dup(1))
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # The Python objects sit on the redirected descriptors (so a logging handler holding the
    # old stdout writes to stderr too); swap them so they see it at once.
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    _claimed = pipe
    return pipe


def exit_quietly_on_sigterm() -> None:
    """Until the event loop installs its own handler, SIGTERM still means a clean exit (0)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def _pump_input(
    fd: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | None]
) -> None:
    """Blocking reads in a daemon thread, so neither EOF nor SIGTERM waits on a pending read;
    os.read, as a daemon thread blocked in a buffered file's lock would abort shutdown."""
    pending = b""
    try:
        while chunk := os.read(fd, READ_CHUNK):
            *complete, pending = (pending + chunk).split(b"\n")
            for line in complete:
                loop.call_soon_threadsafe(lines.put_nowait, line)
    except OSError:
        logger.warning("reading the protocol input failed; treating it as end of input")
    with contextlib.suppress(RuntimeError):  # the loop may already be closed on shutdown
        if pending.strip():
            loop.call_soon_threadsafe(lines.put_nowait, pending)
        loop.call_soon_threadsafe(lines.put_nowait, None)


def _recover_id(line: bytes) -> int | str | None:
    """The top-level "id" of a JSON object that failed to parse, when it can be found: the
    value after `"id" :` among the object's own tokens (a nested value is its bracket alone)."""
    depth, last = 0, [b"", b"", b","]  # the last top-level tokens; the first key follows a ","
    for count, match in enumerate(_TOKEN.finditer(line)):
        token = match.group()
        if count > MAX_ID_SCAN_TOKENS or (count == 0 and token != b"{"):
            return None
        if depth == 1:
            last = [*last[-3:], token]
            if last[:3] == [b",", b'"id"', b":"]:
                try:
                    value = json.loads(token)
                except ValueError:  # a nested value, a number too long to convert, a broken escape
                    return None
                plain = isinstance(value, str) or type(value) is int
                return value if plain else None
        depth += (token in (b"{", b"[")) - (token in (b"}", b"]"))
    return None


def _error_reply(request_id: int | str | None, code: int, message: str) -> bytes:
    return json.dumps(error_body(request_id, code, message)).encode()


def _refusal(line: bytes, exc: Exception) -> bytes:
    """One error reply for a line that is not a JSON-RPC message; never echoes the input. A
    tools/call the SDK's strict parser refused only for a lone surrogate, which Python's parser
    reads, gets the INVALID_INPUT envelope naming the field."""
    with contextlib.suppress(ValueError, RecursionError):
        parsed = json.loads(line)
        if isinstance(parsed, dict) and isinstance(parsed.get("id"), int | str):
            reply = plain_json_refusal(parsed["id"], parsed.get("method"), parsed.get("params"))
            if reply is not None:
                return json.dumps(reply).encode()
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    unparsable = next((e for e in errors if e["type"] == "json_invalid"), None)
    if unparsable is not None or not errors:
        detail = unparsable["msg"] if unparsable else "not valid JSON"
        return _error_reply(_recover_id(line), PARSE_ERROR, f"Parse error: {detail}")
    return _error_reply(
        _recover_id(line),
        INVALID_REQUEST,
        "Invalid Request: expected one JSON-RPC 2.0 request or notification object.",
    )


def _refused(root: Any, initialized: bool) -> bytes | None:
    """The JSON-RPC rules the SDK's session does not enforce, answered by the transport."""
    if isinstance(root, types.JSONRPCNotification) and "id" in (root.model_extra or {}):
        # {"id": null, "method": ...} is neither a request (ids are strings or numbers) nor a
        # notification (which has no id); the SDK would treat it as one and never answer.
        return _error_reply(
            None, INVALID_REQUEST, "Invalid Request: id must be a string or a number."
        )
    if not isinstance(root, types.JSONRPCRequest):
        return None
    unplain = plain_json_refusal(root.id, root.method, root.params)
    if unplain is not None:
        return json.dumps(unplain).encode()
    if root.method == "initialize" and initialized:
        return _error_reply(
            root.id,
            INVALID_REQUEST,
            "Invalid Request: this session is already initialized; start a new server process "
            "to renegotiate.",
        )
    if root.method not in CLIENT_METHODS:
        return _error_reply(root.id, METHOD_NOT_FOUND, f"Method not found: {root.method[:100]}")
    return None


async def _read_messages(
    pipe: ProtocolPipe,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    refusals: MemoryObjectSendStream[SessionMessage | bytes],
    on_end_of_input: Callable[[], None],
) -> None:
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    threading.Thread(
        target=_pump_input,
        args=(pipe.input_fd, asyncio.get_running_loop(), lines),
        name="anchor-stdin",
        daemon=True,
    ).start()
    initialized = False
    async with sink, refusals:
        while (line := await lines.get()) is not None:
            if not line.strip():
                continue
            try:
                message = types.JSONRPCMessage.model_validate_json(line)
            except Exception as exc:  # answer it here and keep reading
                logger.warning(
                    "refused a line that is not a JSON-RPC message (%d bytes)", len(line)
                )
                await refusals.send(_refusal(line, exc))
                continue
            refused = _refused(message.root, initialized)
            if refused is not None:
                await refusals.send(refused)
                continue
            if isinstance(message.root, types.JSONRPCRequest):
                initialized = initialized or message.root.method == "initialize"
            await sink.send(SessionMessage(message))
    on_end_of_input()


def _write_out(fd: int, jobs: queue.SimpleQueue[tuple[bytes, Future[None]] | None]) -> None:
    """Blocking writes on a daemon thread, one message at a time, in order: a client that
    stops reading blocks this thread only, never the event loop (end of input and SIGTERM still
    work), and a daemon thread does not hold the interpreter at exit. os.write, as for input."""
    while (job := jobs.get()) is not None:
        data, done = job
        if not done.set_running_or_notify_cancel():
            continue  # the writer stopped waiting (shutdown)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            done.set_exception(exc)
        else:
            done.set_result(None)


async def _write_messages(
    pipe: ProtocolPipe, source: MemoryObjectReceiveStream[SessionMessage | bytes]
) -> None:
    jobs: queue.SimpleQueue[tuple[bytes, Future[None]] | None] = queue.SimpleQueue()
    threading.Thread(
        target=_write_out, args=(pipe.output_fd, jobs), name="anchor-stdout", daemon=True
    ).start()
    try:
        async with source:
            async for outgoing in source:
                if isinstance(outgoing, bytes):
                    data = outgoing
                else:
                    data = outgoing.message.model_dump_json(
                        by_alias=True, exclude_none=True
                    ).encode()
                # One message per write, never interleaved: only this task writes here.
                done: Future[None] = Future()
                jobs.put((data + b"\n", done))
                await asyncio.wrap_future(done)
    finally:
        jobs.put(None)


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for signum in received:
            logger.info("received %s; shutting down", signal.Signals(signum).name)
            scope.cancel()
            return


_database_connections: weakref.WeakSet[Any] = weakref.WeakSet()


def _remember_connection(sender: Any, connection: Any, **kwargs: Any) -> None:
    _database_connections.add(connection)


async def _release_database() -> None:
    """Close the tool thread's connections, or abandon a call that still holds that thread.

    A call blocked on a lock would keep the process alive for the busy timeout and then commit
    a write nobody hears of. So if the worker thread is not free soon, cancel its PostgreSQL
    statement and exit now: the database rolls the transaction back, as after a crash.
    """
    from django.db import connections

    with anyio.move_on_after(ABANDON_AFTER):
        await sync_to_async(connections.close_all, thread_sensitive=True)()
        return
    logger.warning("a tool call was still running at shutdown; abandoning it (rolled back)")
    for wrapper in list(_database_connections):
        raw = getattr(wrapper, "connection", None)
        if wrapper.vendor == "postgresql" and raw is not None:
            with contextlib.suppress(Exception):
                raw.cancel()  # psycopg's cancel is safe from another thread
    logging.shutdown()
    os._exit(0)


async def _stop_unless_done(scope: anyio.CancelScope) -> None:
    await anyio.sleep(OUTPUT_GRACE_S)
    logger.info("replies were still unsent %ss after end of input; shutting down", OUTPUT_GRACE_S)
    scope.cancel()


async def serve_stdio(pipe: ProtocolPipe) -> None:
    """Serve one client until end of input, SIGTERM/SIGINT, or the client stops reading."""
    from django.db.backends.signals import connection_created

    from workflow.mcp import sdk

    server = sdk.lowlevel_server()
    connection_created.connect(_remember_connection, dispatch_uid="anchor.stdio")
    incoming_sink, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_source = anyio.create_memory_object_stream[SessionMessage | bytes](0)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_stop_on_signal, tasks.cancel_scope)

            def end_of_input() -> None:
                # Replies still owed are written if the client reads them, within a grace.
                tasks.start_soon(_stop_unless_done, tasks.cancel_scope)

            try:
                async with anyio.create_task_group() as streams:
                    streams.start_soon(
                        _read_messages, pipe, incoming_sink, outgoing.clone(), end_of_input
                    )
                    streams.start_soon(_write_messages, pipe, outgoing_source)
                    await server.run(incoming, outgoing, server.create_initialization_options())
            except* BrokenPipeError:
                logger.info("the client closed the protocol output; shutting down")
            tasks.cancel_scope.cancel()
    finally:
        await _release_database()
