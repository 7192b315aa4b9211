"""The stdio side of mcp_serve: guard the protocol streams and move JSON-RPC lines over them.

stdout belongs to the protocol alone. We take private copies of fd 0 and fd 1 before serving and
point the originals at stderr and /dev/null, so a stray print(), a library banner or an input()
prompt can never interleave bytes with a JSON-RPC message or swallow one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import FrameType

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

logger = logging.getLogger("anchor.stdio")

READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ProtocolPipe:
    """Private descriptors for the JSON-RPC stream; nothing else in the process holds them."""

    input_fd: int
    output_fd: int


_claimed: ProtocolPipe | None = None


def claim_stdio_for_protocol() -> ProtocolPipe:
    """Keep the real stdin/stdout for JSON-RPC; fd 1 becomes stderr and fd 0 /dev/null.

    Idempotent: manage.py claims before Django loads anything, and the command claims again.
    """
    global _claimed
    if _claimed is not None:
        route_logging_to_stderr()  # Django configured logging since the first claim
        return _claimed
    sys.stdout.flush()
    pipe = ProtocolPipe(input_fd=os.dup(0), output_fd=os.dup(1))
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # The Python objects now sit on the redirected descriptors; swap them too so line buffering
    # and anything holding sys.stdout see stderr immediately.
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    route_logging_to_stderr()
    _claimed = pipe
    return pipe


def exit_quietly_on_sigterm() -> None:
    """Until the event loop installs its own handler, SIGTERM still means a clean exit (0)."""
    signal.signal(signal.SIGTERM, _exit_quietly)


def _exit_quietly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def route_logging_to_stderr() -> None:
    """Point every stream handler, whoever configured it, at stderr."""
    loggers = [logging.getLogger()] + [
        item
        for item in logging.Logger.manager.loggerDict.values()
        if isinstance(item, logging.Logger)
    ]
    for each in loggers:
        for handler in each.handlers:
            if type(handler) is logging.StreamHandler and handler.stream is not sys.stderr:
                handler.setStream(sys.stderr)


def _pump_input(fd: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue) -> None:
    """Blocking reads in a daemon thread, so neither EOF nor SIGTERM waits on a pending read.

    os.read on the raw descriptor, not sys.stdin: a daemon thread blocked inside a buffered
    file's lock would abort interpreter shutdown.
    """
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


async def _read_messages(
    pipe: ProtocolPipe, sink: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    reader = threading.Thread(
        target=_pump_input,
        args=(pipe.input_fd, asyncio.get_running_loop(), lines),
        name="anchor-stdin",
        daemon=True,
    )
    reader.start()
    async with sink:
        while (line := await lines.get()) is not None:
            if not line.strip():
                continue
            try:
                message = types.JSONRPCMessage.model_validate_json(line)
            except Exception as exc:  # the session answers a parse error; keep reading
                await sink.send(exc)
                continue
            await sink.send(SessionMessage(message))


async def _write_messages(
    pipe: ProtocolPipe, source: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    async with source:
        async for outgoing in source:
            data = outgoing.message.model_dump_json(by_alias=True, exclude_none=True)
            view = memoryview((data + "\n").encode("utf-8"))
            # One message per write loop, never interleaved: only this task writes here.
            while view:
                written = os.write(pipe.output_fd, view)
                view = view[written:]


@contextlib.asynccontextmanager
async def stdio_streams(
    pipe: ProtocolPipe,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    incoming_sink, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_source = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read_messages, pipe, incoming_sink)
        tasks.start_soon(_write_messages, pipe, outgoing_source)
        yield incoming, outgoing


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for signum in received:
            logger.info("received %s; shutting down", signal.Signals(signum).name)
            scope.cancel()
            return


async def serve_stdio(server: Server, pipe: ProtocolPipe) -> None:
    """Serve one client until end of input, SIGTERM/SIGINT, or the client stops reading."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, tasks.cancel_scope)
        try:
            async with stdio_streams(pipe) as (incoming, outgoing):
                await server.run(incoming, outgoing, server.create_initialization_options())
        except* BrokenPipeError:
            logger.info("the client closed the protocol output; shutting down")
        tasks.cancel_scope.cancel()
