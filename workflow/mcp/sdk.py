"""The one adapter to the MCP SDK's and django-mcp-server's internals.

Anchor leans on a few parts of its MCP libraries that are not public API: django-mcp-server
0.5.7's global FastMCP server, its low-level server and tool table, the helper that runs the
SDK's streamable-HTTP handler for a Django request, and the SDK's `RequestResponder.cancel`,
which answers a cancelled request although the spec says not to. Each reliance is reached
through a function here and nowhere else, and `tests/mcp/test_sdk_adapter.py` checks each one
against the installed libraries, so an upgrade that moves any of them fails there, loudly.

A switch to mcp 2.x (when django-mcp-server supports it) replaces this module's bodies: the
low-level server and tool table, the HTTP handler and the cancellation hook are what 2.x
renames. Public SDK types (`mcp.types`, `McpError`, the client) are imported where they are used.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from mcp.shared.session import RequestResponder
from mcp_server import djangomcp
from mcp_server.djangomcp import MCP_SESSION_ID_HDR as _SESSION_HEADER
from mcp_server.djangomcp import _call_starlette_handler, django_request_ctx
from mcp_server.views import MCPServerStreamableHttpView

# The header carrying the MCP session id on streamable HTTP ("Mcp-Session-Id").
SESSION_ID_HEADER: str = _SESSION_HEADER
# django-mcp-server's streamable-HTTP view (a DRF APIView), which anchor_site.http subclasses.
StreamableHttpView = MCPServerStreamableHttpView
# The Django request a tool call is serving (set by django-mcp-server's view; empty on stdio).
REQUEST_CONTEXT: ContextVar[Any] = django_request_ctx


def global_server() -> Any:
    """django-mcp-server's FastMCP instance, built when its module was imported."""
    return djangomcp.global_mcp_server


def lowlevel_server() -> Server[Any, Any]:
    """The SDK's low-level server under FastMCP: the one the transports run."""
    server: Server[Any, Any] = global_server()._mcp_server
    return server


def tool_table(server: Any | None = None) -> dict[str, Any]:
    """The registered tools by name (FastMCP's `Tool` objects), as the server serves them."""
    manager = (server or global_server())._tool_manager
    tools: dict[str, Any] = manager._tools
    return tools


def serve_only_tools(tools: dict[str, Any], server: Any | None = None) -> None:
    """Replace the served tool table: tools/list and tools/call then know only these."""
    (server or global_server())._tool_manager._tools = dict(tools)


def served_tool(name: str) -> Any | None:
    """The served tool of that name, or None."""
    return tool_table().get(name)


def served_tool_names() -> list[str]:
    return sorted(tool_table())


def toolset_method(tool: Any, context: Any, request: Any, kwargs: dict[str, Any]) -> Any:
    """The toolset method a registered tool runs, on a new toolset instance for this request.

    django-mcp-server wraps each method in a caller naming its class and method; we run the
    method ourselves (on our bounded worker thread) rather than through that caller. When the
    method takes the MCP context, it is added to `kwargs`.
    """
    caller = tool.fn
    instance = caller.class_(context=context, request=request)
    if caller.forward_context_kwarg:
        kwargs[caller.context_kwarg] = context
    return getattr(instance, caller.method_name)


def request_context() -> Any:
    """FastMCP's context of the request in progress (its request id, session)."""
    return global_server().get_context()


def call_came_over_http() -> bool:
    """Whether the call in progress is a streamable-HTTP POST (a Django request with headers),
    where django-mcp-server runs the SDK stateless and no request can go back to the client."""
    return getattr(REQUEST_CONTEXT.get(None), "headers", None) is not None


def client_declares_form_elicitation(context: Any) -> bool:
    """Whether the client said at initialize that it answers form-mode elicitation.

    An empty `elicitation: {}` means form mode (the spec keeps that reading for clients from
    before the modes existed); `{"url": {}}` alone does not.
    """
    params = getattr(context.session, "client_params", None)
    declared = params.capabilities.elicitation if params is not None else None
    if declared is None:
        return False
    return declared.form is not None or declared.url is None


def client_identity(context: Any) -> dict[str, str]:
    """Who the client said it is at initialize (clientInfo name and version)."""
    params = getattr(context.session, "client_params", None)
    info = params.clientInfo if params is not None else None
    if info is None:
        return {"name": "", "version": ""}
    return {"name": info.name, "version": info.version}


async def elicit_form(
    context: Any, message: str, requested_schema: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Ask the user through the client (elicitation/create, form mode), tied to the request
    in progress; the user's action (accept, decline, cancel) and the submitted content."""
    result = await context.session.elicit_form(
        message, requested_schema, related_request_id=context.request_context.request_id
    )
    return result.action, dict(result.content or {})


def set_instructions(text: str) -> None:
    lowlevel_server().instructions = text


def instructions() -> str | None:
    return lowlevel_server().instructions


def set_version(version: str) -> None:
    """What serverInfo.version says; without this the SDK reports its own version."""
    lowlevel_server().version = version


def answer_cancellations_with(
    handler: Callable[[RequestResponder[Any, Any]], Awaitable[None]],
) -> None:
    """Replace what the SDK does when a client cancels a request it is serving."""
    RequestResponder.cancel = handler  # type: ignore[method-assign,assignment]


def stop_without_reply(responder: RequestResponder[Any, Any]) -> None:
    """Stop the responder's request and mark it answered, so the SDK sends nothing for it."""
    assert responder._cancel_scope is not None
    responder._cancel_scope.cancel()
    responder._completed = True


def refuse_unknown_tools(message_for: Callable[[str], str]) -> None:
    """Answer tools/call for a tool that is not served with JSON-RPC -32602, as the spec says,
    rather than the tool result the SDK's call_tool handler makes of every failure. Install
    after the call_tool handler."""
    handlers = lowlevel_server().request_handlers
    answer = handlers[types.CallToolRequest]

    async def known_tools_only(request: types.CallToolRequest) -> types.ServerResult:
        name = request.params.name
        if served_tool(name) is None:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS, message=message_for(name)))
        return await answer(request)

    handlers[types.CallToolRequest] = known_tools_only


async def run_http_handler(request: Any, session_manager: Any) -> Any:
    """Run the SDK's streamable-HTTP handler for one Django request; a Django response."""
    return await _call_starlette_handler(request, session_manager)
