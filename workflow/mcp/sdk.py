"""The one adapter to the internals of the MCP SDK and django-mcp-server 0.5.7.

FastMCP's low-level server and tool table, django-mcp-server's global server, request context
and HTTP handler, and the SDK's `RequestResponder.cancel` are not public API: each is reached
through a function here and nowhere else, and `tests/mcp/test_sdk_adapter.py` checks each one
against the installed libraries, so an upgrade that moves one fails there, loudly.

With `mcp_server` installed (HTTP, the admin) the served server is django-mcp-server's global
one; a stdio `mcp_serve` serves the SDK's own FastMCP with the same tools, prompts and resources
(django-mcp-server imports DRF and psycopg: a third of a stdio start for nothing it uses).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from mcp.shared.session import RequestResponder

# The header carrying the MCP session id on streamable HTTP: django-mcp-server's
# MCP_SESSION_ID_HDR, spelled here so a stdio server need not import that package.
SESSION_ID_HEADER = "Mcp-Session-Id"
_DJANGO_MCP = "mcp_server.djangomcp"

_plain_server: FastMCP | None = None


def __getattr__(name: str) -> Any:
    """The HTTP side's names (django-mcp-server's view, which anchor_site.http subclasses, and
    the ContextVar holding a tool call's Django request), imported on first use so a stdio
    server never loads them."""
    if name == "StreamableHttpView":
        from mcp_server.views import MCPServerStreamableHttpView

        return MCPServerStreamableHttpView
    if name == "REQUEST_CONTEXT":
        from mcp_server.djangomcp import django_request_ctx

        return django_request_ctx
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def django_mcp_server_installed() -> bool:
    return apps.is_installed("mcp_server")


def global_server() -> Any:
    """The FastMCP this process serves: django-mcp-server's global one when its app is
    installed, otherwise the SDK's own, built once with the same name and instructions."""
    global _plain_server
    if django_mcp_server_installed():
        from mcp_server import djangomcp

        return djangomcp.global_mcp_server
    if _plain_server is None:
        config = getattr(settings, "DJANGO_MCP_GLOBAL_SERVER_CONFIG", {})
        _plain_server = FastMCP(config.get("name"), config.get("instructions"))
    return _plain_server


def current_request(default: Any) -> Any:
    """The Django request the tool call in progress serves, or `default` (stdio, tests);
    only django-mcp-server's HTTP view sets one, so reading must not load its module."""
    djangomcp = sys.modules.get(_DJANGO_MCP)
    if djangomcp is None:
        return default
    return djangomcp.django_request_ctx.get(default)


@dataclass(frozen=True)
class ToolsetCaller:
    """What a registered tool's `fn` is: which toolset method it runs. Anchor answers
    tools/call itself (workflow.mcp.calls), so FastMCP never calls it."""

    class_: type
    method_name: str
    context_kwarg: str | None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Anchor's tools are run by workflow.mcp.calls, not by FastMCP")


def register_toolset(toolset: type, server: Any | None = None) -> list[str]:
    """Register every public method of the toolset class as a tool, in name order, as
    django-mcp-server's MCPToolset does; the names registered."""
    manager = (server or global_server())._tool_manager
    names = []
    for name, method in inspect.getmembers(toolset(), predicate=inspect.ismethod):
        if name.startswith("_"):
            continue
        # structured_output=False: no output model or schema is built; Anchor publishes none
        # (workflow.mcp.tool_list) and makes its own structuredContent (workflow.mcp.calls).
        tool = manager.add_tool(sync_to_async(method), structured_output=False)
        tool.fn = ToolsetCaller(toolset, name, tool.context_kwarg)
        names.append(tool.name)
    return names


def lowlevel_server() -> Server[Any, Any]:
    """The SDK's low-level server under FastMCP: the one the transports run."""
    return cast("Server[Any, Any]", global_server()._mcp_server)


def tool_table(server: Any | None = None) -> dict[str, Any]:
    """The registered tools by name (FastMCP's `Tool` objects), as the server serves them."""
    return cast("dict[str, Any]", (server or global_server())._tool_manager._tools)


def serve_only_tools(tools: dict[str, Any], server: Any | None = None) -> None:
    """Replace the served tool table: tools/list and tools/call then know only these."""
    (server or global_server())._tool_manager._tools = dict(tools)


def served_tool(name: str) -> Any | None:
    return tool_table().get(name)


def served_tool_names() -> list[str]:
    return sorted(tool_table())


def toolset_method(tool: Any, context: Any, request: Any, kwargs: dict[str, Any]) -> Any:
    """The toolset method a registered tool runs, on a new instance for this request (the MCP
    context added to `kwargs` when the method takes it)."""
    caller: ToolsetCaller = tool.fn
    instance = caller.class_(request=request)
    if caller.context_kwarg is not None:
        kwargs[caller.context_kwarg] = context
    return getattr(instance, caller.method_name)


def request_context() -> Any:
    """FastMCP's context of the request in progress (its request id, session)."""
    return global_server().get_context()


def call_came_over_http() -> bool:
    """Whether the call in progress is a streamable-HTTP POST (a Django request with headers),
    where django-mcp-server runs the SDK stateless and no request can go back to the client."""
    return getattr(current_request(None), "headers", None) is not None


def client_declares_form_elicitation(context: Any) -> bool:
    """Whether the client said at initialize that it answers form-mode elicitation (an empty
    `elicitation: {}` means form mode, as the spec reads it; `{"url": {}}` alone does not)."""
    params = getattr(context.session, "client_params", None)
    declared = params.capabilities.elicitation if params is not None else None
    return declared is not None and (declared.form is not None or declared.url is None)


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


def answer_cancellations_without_reply() -> None:
    """notifications/cancelled: stop the request and send nothing (the spec's SHOULD NOT).
    The SDK's error reply reads as "nothing happened" though a commit may have landed; the
    call's own bound (`records.query_bounds`) rolls back whatever had not committed."""
    RequestResponder.cancel = _cancel_without_reply  # type: ignore[method-assign]


async def _cancel_without_reply(self: RequestResponder[Any, Any]) -> None:
    """Stop the responder's request and mark it answered, so the SDK sends nothing for it."""
    assert self._cancel_scope is not None
    self._cancel_scope.cancel()
    self._completed = True


def invalid_params(message: str) -> McpError:
    """A JSON-RPC -32602 refusal (an unknown tool, prompt or resource, a bad argument)."""
    return McpError(types.ErrorData(code=types.INVALID_PARAMS, message=message))


def refuse_unknown_tools(find: Callable[[str], Any], message_for: Callable[[str], str]) -> None:
    """Answer tools/call for a tool `find` does not know with JSON-RPC -32602, as the spec says,
    not with a tool result. Install after the call_tool handler."""
    handlers = lowlevel_server().request_handlers
    answer = handlers[types.CallToolRequest]

    async def known_tools_only(request: types.CallToolRequest) -> types.ServerResult:
        name = request.params.name
        if find(name) is None:
            raise invalid_params(message_for(name))
        return await answer(request)

    handlers[types.CallToolRequest] = known_tools_only


async def run_http_handler(request: Any, view: Any) -> Any:
    """Run the SDK's streamable-HTTP handler for one Django request that django-mcp-server's
    view (`StreamableHttpView` or a subclass) received; a Django response."""
    from mcp_server.djangomcp import _call_starlette_handler

    # The view holds its DjangoMCP server as `mcp_server`; DjangoMCP builds the SDK's
    # StreamableHTTPSessionManager on first use of its `session_manager` property.
    return await _call_starlette_handler(request, view.mcp_server.session_manager)
