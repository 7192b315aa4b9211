"""Start `manage.py mcp_serve` as a client does: the official client, or a raw pipe (which shows
the process ID and the moment the initialize result arrives); and the second server that writes
beside the measured one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from workflow.mcp.client import ClientSession, open_stdio_session, tool_envelope

# Not DJANGO_SETTINGS_MODULE: manage.py picks the stdio server's own, as for a client.
PASSED_THROUGH = ("PATH", "DATABASE_URL", "ANCHOR_DB_PATH", "HOME", "XDG_CACHE_HOME")
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "anchor-benchmark", "version": "1"},
}
NOOP = "get_server_instructions"  # the closest the server has to a no-op: a fixed text
NOOP_WHAT = f"{NOOP} (no-op) on the same server"


def command() -> list[str]:
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "mcp_serve"]


def server_env(**overrides: str) -> dict[str, str]:
    """The variables a client configuration would set, and nothing else; every tool listed."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update(ANCHOR_WORKSPACE_ID=data.WORKSPACE, ANCHOR_ACTOR_ID=data.ACTOR)
    return env | {"ANCHOR_LOG_LEVEL": "WARNING", "ANCHOR_TOOLS": "full"} | overrides


@asynccontextmanager
async def client_session(
    argv: list[str] | None = None, /, **env: str
) -> AsyncIterator[ClientSession]:
    """The official client's session with mcp_serve (or `argv`, another stdio MCP server)."""
    with open(os.devnull, "w") as quiet:
        async with open_stdio_session(
            argv or command(),
            env=server_env(**env),
            cwd=settings.BASE_DIR,
            errlog=quiet,
            timeout=timedelta(seconds=120),
        ) as session:
            yield session


def result_of(name: str, envelope: dict[str, Any]) -> Any:
    """The tool's result; a refusal is a benchmark bug, so it raises."""
    if not envelope.get("ok"):
        raise RuntimeError(f"{name} refused: {envelope.get('error')}")
    return envelope["result"]


def envelope_of(result: dict[str, Any]) -> Any:
    """A tools/call result's envelope: its structured content, or its text parsed."""
    return result.get("structuredContent") or json.loads(result["content"][0]["text"])


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    return result_of(name, tool_envelope(await session.call_tool(name, arguments)))


async def timed_call(session: ClientSession, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    await call(session, name, arguments)
    return time.perf_counter() - started


async def noop(session: ClientSession) -> float:
    """One round trip that touches no database."""
    return await timed_call(session, NOOP, {})


class RawServer:
    """mcp_serve (or `argv`, another stdio MCP server) on a plain pipe, timed from spawn. As a
    context manager it is initialized on the way in (`startup_s`) and closed on the way out
    (`stop_s`)."""

    def __init__(self, argv: list[str] | None = None, **env: str) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv or command(),
            cwd=settings.BASE_DIR,
            env=server_env(**env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 1
        self.initialized: dict[str, Any] = {}
        self.startup_s = self.stop_s = 0.0

    def __enter__(self) -> RawServer:
        try:
            self.initialized = self.request("initialize", INITIALIZE)
        except BaseException:
            self.close()
            raise
        self.startup_s = time.perf_counter() - self.started
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id, self.next_id = self.next_id, self.next_id + 1
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
        raise RuntimeError(f"the server exited before answering {method}")

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return result_of(name, envelope_of(result))

    def resident_mb(self) -> float | None:
        """Resident set size from /proc (Linux); None elsewhere."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        found = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
        return int(found[0]) / 1024 if found else None

    def close(self) -> None:
        """Close its input and wait for its exit, timed into `stop_s`."""
        started = time.perf_counter()
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stop_s = time.perf_counter() - started
        if self.process.stdout:
            self.process.stdout.close()


# --- the second server: a team writing beside the measured one ---------------------------------

NOTE = "another mcp_serve made a guarded create in that collection before each measured call"


def create_action(collection_id: str, title: str, review_id: str, **data: Any) -> dict[str, Any]:
    """prepare_write's arguments for a new record, citing the review that found it new."""
    return {
        "operation": "create_record",
        "arguments": {"collection_id": collection_id, "title": title, "data": data},
        "review_ids": [review_id],
        "decision_reason": "benchmark: guarded create",
    }


def update_action(
    review: dict[str, Any], changes: dict[str, Any], version: int | None = None, why: str = "round"
) -> dict[str, Any]:
    """prepare_write's arguments for an update of the record `review` selected, citing it."""
    arguments = {
        "record_id": review["selected_record_id"],
        "changes": changes,
        # A resolved reply shows the chosen record first.
        "expected_version": version or review["candidates"][0]["version"],
    }
    return {
        "operation": "update_record",
        "arguments": arguments,
        "review_ids": [review["resolution_id"]],
        "decision_reason": f"benchmark: {why}",
    }


async def guarded_create(session: ClientSession, collection_id: str, title: str) -> float:
    """resolve_record -> prepare_write create_record citing it -> commit_write; seconds."""
    started = time.perf_counter()
    review = await call(session, "resolve_record", {"query": title, "collection_id": collection_id})
    action = create_action(collection_id, title, review["resolution_id"])
    prepared = await call(session, "prepare_write", action)
    await call(session, "commit_write", {"action_id": prepared["action_id"]})
    return time.perf_counter() - started


class Writer:
    """Another server's client: before each measured call, one guarded create in the collection
    that call reads or writes, under a name no generated one uses (each reviews clean)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.names = data.person_names(50_000, seed=4_242)
        self.writes = 0

    async def write(self, collection_id: str) -> None:
        title = f"{self.names[self.writes % len(self.names)]} Wx {self.writes}"
        self.writes += 1
        await guarded_create(self.session, collection_id, title)


# A session phase: its rows, measured on the session with the second server writing beside it.
Phase = Callable[[ClientSession, Writer, Sizes], Awaitable[list[Row]]]
