"""Fit django-mcp-server's global MCP server to Anchor, once, when the workflow app is ready."""

from __future__ import annotations

from django.conf import settings
from mcp_server.djangomcp import global_mcp_server

from workflow.mcp import sdk_speedups, tool_list
from workflow.mcp.instructions import install_server_instructions
from workflow.mcp.stdio import ProtocolPipe, serve_stdio


def install() -> None:
    register_toolsets()
    install_server_instructions()
    sdk_speedups.install()
    tool_list.install(global_mcp_server, settings.ANCHOR_TOOLS)


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
