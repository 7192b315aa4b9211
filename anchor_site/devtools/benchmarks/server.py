"""Start `manage.py mcp_serve` the way a client does: the official client, or a raw pipe.

The official client (stdio_client + ClientSession) is what agents use, so round trips are timed
through it. The raw pipe exposes what the client hides: the process ID (for resident memory)
and the moment the initialize result arrives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

from anchor_site.devtools.benchmarks import data
from workflow.mcp.client import ClientSession, open_stdio_session, tool_envelope

PROTOCOL_VERSION = "2025-06-18"
# Not DJANGO_SETTINGS_MODULE: manage.py picks the stdio server's own, as for a client.
PASSED_THROUGH = ("PATH", "DATABASE_URL", "ANCHOR_DB_PATH", "HOME", "XDG_CACHE_HOME")


def command() -> list[str]:
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "mcp_serve"]


def server_env(**overrides: str) -> dict[str, str]:
    """The variables a client configuration would set, and nothing else."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.update(
        ANCHOR_WORKSPACE_ID=data.WORKSPACE,
        ANCHOR_ACTOR_ID=data.ACTOR,
        ANCHOR_LOG_LEVEL="WARNING",
        # The areas measure every tool; the tool_list area names each profile it counts.
        ANCHOR_TOOLS="full",
    )
    env.update(overrides)
    return env


@asynccontextmanager
async def client_session(**env: str) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as quiet:
        async with open_stdio_session(
            command(),
            env=server_env(**env),
            cwd=settings.BASE_DIR,
            errlog=quiet,
            timeout=timedelta(seconds=120),
        ) as session:
            yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    """The tool's result; a refusal is a benchmark bug, so it raises."""
    reply = await session.call_tool(name, arguments)
    envelope = tool_envelope(reply)
    if not envelope.get("ok"):
        raise RuntimeError(f"{name} refused: {envelope.get('error')}")
    return envelope["result"]


class RawServer:
    """mcp_serve on a plain pipe, timed from spawn to the initialize result."""

    def __init__(self, argv: list[str] | None = None, **env: str) -> None:
        """mcp_serve, or `argv` (another stdio MCP server) started the same way."""
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

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = self.next_id
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"mcp_serve exited before answering {method}")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    def initialize(self) -> float:
        """Seconds from spawn to the initialize result (kept as `initialized`)."""
        self.initialized = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "anchor-benchmark", "version": "1"},
            },
        )
        elapsed = time.perf_counter() - self.started
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        envelope = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        if not envelope.get("ok"):
            raise RuntimeError(f"{name} refused: {envelope.get('error')}")
        return envelope["result"]

    def resident_mb(self) -> float | None:
        """Resident set size from /proc (Linux); None elsewhere."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None

    def close(self) -> float:
        """Seconds from closing its input to its exit."""
        started = time.perf_counter()
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        stopped = time.perf_counter() - started
        if self.process.stdout:
            self.process.stdout.close()
        return stopped

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()
