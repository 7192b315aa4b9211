"""The official MCP client, opened the one way the walkthrough and the benchmarks use it (a real
`mcp_serve` over stdio), so an SDK upgrade stays inside `workflow.mcp`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

__all__ = ["ClientSession", "TextContent", "open_stdio_session"]


@asynccontextmanager
async def open_stdio_session(
    command: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str,
    errlog: TextIO,
    timeout: timedelta,
) -> AsyncIterator[ClientSession]:
    """Start `command` as an MCP server on stdio and yield an initialized client session."""
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(env), cwd=str(cwd)
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, read_timeout_seconds=timeout) as session,
    ):
        await session.initialize()
        yield session


def tool_envelope(reply: Any) -> Any:
    """The envelope a tool call returned: its structured content, or its text parsed."""
    if reply.structuredContent is not None:
        return reply.structuredContent
    return json.loads(reply.content[0].text)
