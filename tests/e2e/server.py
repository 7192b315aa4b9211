"""Start `manage.py mcp_serve` as a subprocess, the way an MCP client does, and talk to it.

Two ways in: the official MCP client (stdio_client + ClientSession) for behaviour, and a raw
pipe for what the client hides: the exact bytes on stdout, exit status and timing. Every
variable the server needs is passed explicitly, as a real client configuration would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any, TextIO
from unittest import mock
from urllib.parse import quote

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, InitializeResult, TextContent

from tests.envelope import expect_ok
from tests.migrated_schema import copy_sqlite, migrated_copy

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "manage.py", "mcp_serve"]
PROTOCOL_VERSION = "2025-06-18"


def base_env(**overrides: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "ANCHOR_LOG_LEVEL": "INFO",
        # The suite exercises every tool; test_first_calls serves the default (core) itself.
        "ANCHOR_TOOLS": "full",
    }
    env.update(overrides)
    return env


def postgres_url(settings_dict: dict[str, Any]) -> str:
    user = quote(settings_dict.get("USER") or "", safe="")
    password = quote(settings_dict.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "localhost"
    port = settings_dict.get("PORT") or "5432"
    return f"postgres://{auth}{host}:{port}/{quote(settings_dict['NAME'], safe='')}"


# --- the official client ---------------------------------------------------------------------


@asynccontextmanager
async def mcp_session(
    env: dict[str, str], errlog: TextIO, *options: str, **session_options: Any
) -> AsyncIterator[tuple[ClientSession, InitializeResult]]:
    """A session with `manage.py mcp_serve [options]`; options are command-line flags, and
    session_options go to the client session (an elicitation_callback, a client_info)."""
    params = StdioServerParameters(
        command=SERVE[0], args=[*SERVE[1:], *options], env=env, cwd=REPO_ROOT
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(
            read, write, read_timeout_seconds=timedelta(seconds=60), **session_options
        ) as session,
    ):
        initialized = await session.initialize()
        yield session, initialized


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The tool's {"ok": ...} envelope, as structuredContent or its JSON text twin."""
    envelope = result.structuredContent
    assert envelope is not None, f"no envelope: {result.content}"
    part = result.content[0]
    assert isinstance(part, TextContent), part
    assert json.loads(part.text) == envelope
    assert result.isError is (not envelope["ok"]), f"isError disagrees with ok: {result}"
    return envelope


async def call_ok(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    return expect_ok(envelope(await session.call_tool(name, arguments)), name, arguments)


# --- the raw pipe ----------------------------------------------------------------------------


def start_raw(env: dict[str, str], stderr: TextIO | int = subprocess.PIPE) -> subprocess.Popen:
    return subprocess.Popen(
        SERVE,
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )


def send(process: subprocess.Popen, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def read_reply(process: subprocess.Popen, request_id: int) -> dict[str, Any]:
    """Read stdout lines up to the reply to request_id; every line must be JSON-RPC."""
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        assert line, f"server closed stdout before replying to request {request_id}"
        message = json.loads(line)  # a stray non-JSON line fails the test right here
        assert message.get("jsonrpc") == "2.0", f"not a JSON-RPC message: {line!r}"
        if message.get("id") == request_id:
            return message


def initialize_raw(process: subprocess.Popen) -> dict[str, Any]:
    send(
        process,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "anchor-e2e", "version": "1"},
            },
        },
    )
    reply = read_reply(process, 1)
    send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply["result"]


def call_raw(
    process: subprocess.Popen, request_id: int, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    send(
        process,
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        },
    )
    return read_reply(process, request_id)["result"]


# --- seeding ---------------------------------------------------------------------------------


def seed(env: dict[str, str], *arguments: str) -> dict[str, str]:
    """Run tests/e2e/seed.py against the server's database; returns the seeded IDs.

    A Django start-up and the seed's writes cost seconds each time. On SQLite, when the
    server's file is still exactly an empty migrated copy (no server has opened it, nothing
    was seeded into it yet), each distinct seed (its arguments and environment) runs once per
    test process into a template, and the file is replaced by a copy of that template: the
    same rows, made by the same script. On PostgreSQL, where the server shares this test
    process's database, the script's writes are made here. Anything else (a second seed into
    one file, a file a server has touched) runs the script against the file itself.
    """
    path = env.get("ANCHOR_DB_PATH")
    if path and "DATABASE_URL" not in env and is_untouched_migrated_copy(Path(path)):
        key = tuple(sorted((k, v) for k, v in env.items() if k != "ANCHOR_DB_PATH"))
        template, ids = _seeded_template(key, arguments)
        copy_sqlite(template, Path(path))
        return dict(ids)
    if _shares_this_process_database(env):
        return _seed_here(env, arguments)
    return _run_seed(env, *arguments)


def _shares_this_process_database(env: dict[str, str]) -> bool:
    """Whether the server's database is this test process's own, committing as it writes
    (PostgreSQL, a transactional test): the seed's rows are then the same written from here."""
    from django.db import connection

    return (
        env.get("DATABASE_URL") == postgres_url(connection.settings_dict)
        and connection.get_autocommit()
        and not connection.in_atomic_block
    )


def _seed_here(env: dict[str, str], arguments: tuple[str, ...]) -> dict[str, str]:
    """The seed script's writes, made in this process: a Django start-up fewer per seed. The
    workspace and actor are read from the server's environment, as the script would."""
    from anchor_site import env as anchor_env
    from tests.e2e.seed import seed_as

    with mock.patch.dict(os.environ):  # restored whole on the way out
        for key in ("ANCHOR_WORKSPACE_ID", "ANCHOR_ACTOR_ID"):
            os.environ.pop(key, None)
            if key in env:
                os.environ[key] = env[key]
        values = anchor_env.read()
        workspace_id, actor_id = values.ANCHOR_WORKSPACE_ID, values.ANCHOR_ACTOR_ID
    return seed_as(workspace_id, actor_id, list(arguments))


def _run_seed(env: dict[str, str], *arguments: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.seed", *arguments],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"seeding failed:\n{done.stderr}"
    return json.loads(done.stdout)


@cache
def _empty_copy_bytes() -> bytes:
    """The bytes of an empty migrated copy, to recognise a file nothing has written to."""
    path = Path(tempfile.mkdtemp(prefix="anchor-empty-")) / "empty.db"
    return Path(migrated_copy(path)).read_bytes()


def is_untouched_migrated_copy(path: Path) -> bool:
    if any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm", "-journal")):
        return False  # a server has it open, or left it mid-transaction
    try:
        return path.read_bytes() == _empty_copy_bytes()
    except FileNotFoundError:
        return False


@cache
def _seeded_template(
    env_items: tuple[tuple[str, str], ...], arguments: tuple[str, ...]
) -> tuple[Path, tuple[tuple[str, str], ...]]:
    path = Path(tempfile.mkdtemp(prefix="anchor-seeded-")) / "seeded.db"
    migrated_copy(path)
    ids = _run_seed({**dict(env_items), "ANCHOR_DB_PATH": str(path)}, *arguments)
    return path, tuple(ids.items())
