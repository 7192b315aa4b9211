"""Each reliance of workflow.mcp.sdk on the MCP SDK and django-mcp-server, checked on the
installed versions: an upgrade that moves or renames any of them fails here, by name."""

from __future__ import annotations

import inspect
import json
import sys
from contextvars import ContextVar
from importlib.metadata import version
from types import SimpleNamespace

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError
from mcp.shared.session import RequestResponder
from mcp_server import djangomcp
from rest_framework.views import APIView

from workflow.mcp import jsonrpc, sdk
from workflow.mcp.tools.base import Toolset
from workflow.mcp.tools.reviews import ReviewTools


def test_the_pins_the_adapter_was_written_against():
    assert version("django-mcp-server") == "0.5.7"
    assert version("mcp").split(".")[0] == "1"


def test_the_global_server_is_fastmcp_over_the_lowlevel_server():
    assert isinstance(sdk.global_server(), FastMCP)
    assert isinstance(sdk.lowlevel_server(), Server)


def test_version_and_instructions_reach_the_initialize_result():
    options = sdk.lowlevel_server().create_initialization_options()
    assert options.server_version == settings.ANCHOR_VERSION
    assert options.instructions == sdk.instructions()
    assert "resolve_record" in (sdk.instructions() or "")


def test_the_tool_table_holds_fastmcp_tools_by_name():
    table = sdk.tool_table()
    assert "resolve_record" in table
    tool = table["resolve_record"]
    assert tool.name == "resolve_record"
    # What the argument checker reads (workflow.mcp.calls.checker_for).
    assert isinstance(tool.parameters, dict)
    assert tool.fn_metadata.arg_model is not None
    # What toolset_method reads: our caller in place of FastMCP's function.
    assert tool.fn == sdk.ToolsetCaller(ReviewTools, "resolve_record", None)


def test_register_toolset_reads_name_docstring_signature_and_context_through_sync_to_async():
    """FastMCP's add_tool sees through asgiref's wrapper, and finds a Context parameter."""

    class Probe(Toolset):
        def plain(self, text: str) -> str:
            """Say it."""
            return text

        def with_context(self, ctx: Context, count: int = 1) -> int:
            return count

        def _private(self) -> None:
            pass

    server = FastMCP("probe")
    assert sdk.register_toolset(Probe, server) == ["plain", "with_context"]
    table = sdk.tool_table(server)
    assert table["plain"].description == "Say it."
    # Built without an output model or schema (structured_output=False): none is published.
    assert table["plain"].fn_metadata.output_model is None
    assert table["plain"].output_schema is None
    assert list(table["plain"].parameters["properties"]) == ["text"]
    assert list(table["with_context"].parameters["properties"]) == ["count"]
    kwargs: dict = {}
    method = sdk.toolset_method(table["with_context"], "the context", None, kwargs)
    assert kwargs == {"ctx": "the context"}
    assert method(**kwargs) == 1
    assert sdk.toolset_method(table["plain"], "the context", None, kwargs := {})("x") == "x"
    assert kwargs == {}
    with pytest.raises(RuntimeError, match="workflow.mcp.calls"):
        table["plain"].fn("x")


def test_without_the_django_mcp_server_app_the_sdks_own_fastmcp_is_served(monkeypatch):
    monkeypatch.setattr(sdk, "django_mcp_server_installed", lambda: False)
    monkeypatch.setattr(sdk, "_plain_server", None)
    plain = sdk.global_server()
    assert type(plain) is FastMCP
    assert plain.name == settings.DJANGO_MCP_GLOBAL_SERVER_CONFIG["name"]
    assert sdk.global_server() is plain  # built once
    monkeypatch.undo()
    assert sdk.global_server() is djangomcp.global_mcp_server


def test_current_request_reads_django_mcp_servers_context_only_once_it_is_loaded(monkeypatch):
    request = SimpleNamespace(headers={"x": "y"})
    context = sdk.REQUEST_CONTEXT
    token = context.set(request)
    try:
        assert sdk.current_request(None) is request
        assert sdk.call_came_over_http()
        monkeypatch.delitem(sys.modules, "mcp_server.djangomcp")
        assert sdk.current_request("none") == "none"
        assert not sdk.call_came_over_http()
    finally:
        context.reset(token)


def test_serving_a_subset_is_what_tools_list_answers():
    everything = dict(sdk.tool_table())
    try:
        sdk.serve_only_tools({"resolve_record": everything["resolve_record"]})
        listed = async_to_sync(sdk.global_server().list_tools)()
        assert [tool.name for tool in listed] == ["resolve_record"]
        assert sdk.served_tool("search_records") is None
    finally:
        sdk.serve_only_tools(everything)
    assert sdk.served_tool("search_records") is not None


def test_toolset_method_binds_a_new_instance_and_forwards_the_context():
    tool = sdk.tool_table()["list_collections"]
    kwargs: dict = {}
    method = sdk.toolset_method(tool, context=None, request=SimpleNamespace(), kwargs=kwargs)
    assert method.__name__ == "list_collections"
    assert isinstance(method.__self__, tool.fn.class_)


def test_the_cancel_hook_is_ours_and_the_responder_keeps_its_scope_and_flag():
    assert RequestResponder.cancel is sdk._cancel_without_reply
    # _cancel_without_reply sets these two; the SDK's responder must still define them.
    source = inspect.getsource(RequestResponder.__init__)
    assert "self._cancel_scope" in source
    assert "self._completed" in source


def test_the_http_handler_and_view():
    assert inspect.iscoroutinefunction(djangomcp._call_starlette_handler)
    assert list(inspect.signature(djangomcp._call_starlette_handler).parameters) == [
        "django_request",
        "session_manager",
    ]
    assert issubclass(sdk.StreamableHttpView, APIView)
    # run_http_handler reads the view's server and that server's session manager.
    assert "mcp_server" in vars(sdk.StreamableHttpView)
    assert isinstance(inspect.getattr_static(djangomcp.DjangoMCP, "session_manager"), property)
    assert sdk.SESSION_ID_HEADER == djangomcp.MCP_SESSION_ID_HDR
    assert isinstance(sdk.REQUEST_CONTEXT, ContextVar)
    assert sdk.REQUEST_CONTEXT is djangomcp.django_request_ctx
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        sdk.Missing  # noqa: B018


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("PARSE_ERROR", -32700),
        ("INVALID_REQUEST", -32600),
        ("METHOD_NOT_FOUND", -32601),
        ("INVALID_PARAMS", -32602),
        ("INTERNAL_ERROR", -32603),
    ],
)
def test_json_rpc_codes_are_the_specs(name, code):
    assert getattr(jsonrpc, name) == code


def test_error_body_is_the_sdks_error_shape_in_its_key_order():
    plain = jsonrpc.error_body(None, jsonrpc.PARSE_ERROR, "Parse error: not valid JSON")
    assert json.dumps(plain) == (
        '{"jsonrpc": "2.0", "id": null, '
        '"error": {"code": -32700, "message": "Parse error: not valid JSON"}}'
    )
    with_data = jsonrpc.error_body(7, jsonrpc.INTERNAL_ERROR, "Busy.", data={"cause": "pool"})
    assert json.dumps(with_data) == (
        '{"jsonrpc": "2.0", "id": 7, '
        '"error": {"code": -32603, "message": "Busy.", "data": {"cause": "pool"}}}'
    )
    # What the SDK itself would send for the same error (it cannot send the null id).
    sdk_error = types.JSONRPCError(
        jsonrpc="2.0",
        id=7,
        error=types.ErrorData(code=-32603, message="Busy.", data={"cause": "pool"}),
    )
    assert json.dumps(sdk_error.model_dump(exclude_none=True)) == json.dumps(with_data)


def test_client_methods_come_from_the_sdk():
    assert {"initialize", "tools/call", "tools/list", "ping"} <= jsonrpc.CLIENT_METHODS


def test_what_elicitation_relies_on():
    """sdk.elicit_form, client_declares_form_elicitation and client_identity read these."""
    from mcp import types
    from mcp.server.session import ServerSession

    parameters = inspect.signature(ServerSession.elicit_form).parameters
    assert list(parameters)[1:4] == ["message", "requestedSchema", "related_request_id"]
    assert isinstance(inspect.getattr_static(ServerSession, "client_params"), property)
    assert {"form", "url"} <= set(types.ElicitationCapability.model_fields)
    assert {"action", "content"} <= set(types.ElicitResult.model_fields)
    assert {"name", "version"} <= set(types.Implementation.model_fields)


def test_form_elicitation_is_read_from_the_declared_capability():
    from mcp import types

    def context(elicitation):
        capabilities = types.ClientCapabilities(elicitation=elicitation)
        params = types.InitializeRequestParams(
            protocolVersion="2025-11-25",
            capabilities=capabilities,
            clientInfo=types.Implementation(name="c", version="2"),
        )
        return SimpleNamespace(session=SimpleNamespace(client_params=params))

    assert sdk.client_declares_form_elicitation(context(types.ElicitationCapability()))
    form = types.ElicitationCapability(form=types.FormElicitationCapability())
    assert sdk.client_declares_form_elicitation(context(form))
    url_only = types.ElicitationCapability(url=types.UrlElicitationCapability())
    assert not sdk.client_declares_form_elicitation(context(url_only))
    assert not sdk.client_declares_form_elicitation(context(None))
    assert sdk.client_identity(context(None)) == {"name": "c", "version": "2"}
    assert not sdk.call_came_over_http()  # no Django request in flight here


def test_unknown_tools_are_refused_by_our_handler_in_the_lowlevel_table():
    """refuse_unknown_tools wraps the SDK's tools/call handler in its request_handlers table."""
    handler = sdk.lowlevel_server().request_handlers[types.CallToolRequest]
    assert handler.__name__ == "known_tools_only"
    request = types.CallToolRequest(
        method="tools/call", params=types.CallToolRequestParams(name="no_such_tool", arguments={})
    )
    with pytest.raises(McpError) as refused:
        async_to_sync(handler)(request)
    assert refused.value.error.code == jsonrpc.INVALID_PARAMS
    assert "no_such_tool" in refused.value.error.message
