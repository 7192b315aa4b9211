"""Drive the real MCP server object in process, from synchronous pytest-django tests.

Tools run through sync_to_async(thread_sensitive=True), which executes them on the calling
thread here, so they see the test's database transaction.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from asgiref.sync import async_to_sync
from mcp.shared.memory import create_connected_server_and_client_session

from workflow.mcp import sdk


async def _call(name: str, arguments: dict[str, Any]) -> Any:
    async with create_connected_server_and_client_session(sdk.lowlevel_server()) as s:
        return await s.call_tool(name, arguments)


async def _list() -> Any:
    async with create_connected_server_and_client_session(sdk.lowlevel_server()) as s:
        return await s.list_tools()


def call_tool_raw(name: str, arguments: dict[str, Any] | None = None) -> Any:
    # No HTTP request is in flight here: the stdio scope (settings) applies.
    sdk.REQUEST_CONTEXT.set(SimpleNamespace())
    return async_to_sync(_call)(name, arguments or {})


def call_tool(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """The tool's envelope ({"ok": ...}) as the client sees it in structuredContent."""
    result = call_tool_raw(name, arguments)
    envelope = result.structuredContent
    assert envelope is not None, f"{name} returned no envelope: {result.content}"
    # The text block carries the same JSON, for clients that read only text.
    assert json.loads(result.content[0].text) == envelope
    assert result.isError is (not envelope["ok"]), f"{name}: isError disagrees with ok"
    return envelope


def list_tools() -> list[Any]:
    return async_to_sync(_list)().tools
