"""Fit django-mcp-server's global MCP server to Anchor, once, when the workflow app is ready.

Every adaptation of the SDK's server lives here: tool registration, the tool list, our own
tools/call path, the server's name and version, errors for unknown resources and prompts, and
silence for cancelled requests.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from mcp import types
from mcp.server.fastmcp.exceptions import ResourceError
from mcp.shared.exceptions import McpError
from mcp.shared.session import RequestResponder
from mcp_server.djangomcp import global_mcp_server

from workflow.mcp import calls, tool_list
from workflow.mcp.instructions import install_server_instructions
from workflow.mcp.stdio import ProtocolPipe, serve_stdio

INVALID_PARAMS = -32602


def install() -> None:
    register_toolsets()
    install_server_instructions()
    tool_list.install(global_mcp_server, settings.ANCHOR_TOOLS)
    lowlevel = global_mcp_server._mcp_server
    lowlevel.version = settings.ANCHOR_VERSION  # else the SDK reports its own version
    lowlevel.call_tool(validate_input=False)(calls.call_tool)
    lowlevel.read_resource()(_read_resource)
    lowlevel.get_prompt()(_get_prompt)
    RequestResponder.cancel = _cancel_without_reply  # type: ignore[method-assign]


def register_toolsets() -> None:
    """Register Anchor's toolsets with the global server, as django-mcp-server's own init does.

    Explicit rather than autodiscovered: `workflow.mcp` must stay importable before Django is
    set up (manage.py claims stdio from it first), so the tool modules load here instead.
    """
    from workflow.mcp.tools import TOOLSETS

    for toolset in TOOLSETS:
        if toolset.mcp_server is None:
            toolset.mcp_server = global_mcp_server
            global_mcp_server.register_mcptoolset(toolset())


def select_tools(selection: str) -> None:
    """Serve only the selected tools ('full', 'core' or names); ImproperlyConfigured if bad."""
    tool_list.install(global_mcp_server, selection)


async def serve_stdio_pipe(pipe: ProtocolPipe) -> None:
    """Serve the global server's tools over the claimed stdio pipe until end of input."""
    await serve_stdio(global_mcp_server._mcp_server, pipe)


# --- adaptations ---------------------------------------------------------------------------


async def _read_resource(uri: Any) -> Any:
    # FastMCP raises a bare error for an unknown URI, which the SDK answers with code 0.
    try:
        return await global_mcp_server.read_resource(uri)
    except (ResourceError, ValueError) as exc:
        raise McpError(types.ErrorData(code=INVALID_PARAMS, message=str(exc)[:500])) from None


async def _get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    try:
        return await global_mcp_server.get_prompt(name, arguments)
    except ValueError as exc:
        raise McpError(types.ErrorData(code=INVALID_PARAMS, message=str(exc)[:500])) from None


async def _cancel_without_reply(self: RequestResponder[Any, Any]) -> None:
    """notifications/cancelled: stop the request and send nothing (the spec's SHOULD NOT).

    The SDK answers a cancelled request with an error (code 0, "Request cancelled"), which a
    client may read as "nothing happened" though a commit may already have landed. The call's
    own bound (`records.query_bounds`) rolls back whatever had not committed.
    """
    assert self._cancel_scope is not None
    self._cancel_scope.cancel()
    self._completed = True
