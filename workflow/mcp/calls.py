"""tools/call, answered by Anchor rather than by the SDK's FastMCP path, on every transport:
arguments checked exactly as sent (`workflow.mcp.arguments`), the tool run on Django's worker
thread with its queries bounded in time, and the envelope returned as `structuredContent` with
`isError` exactly when `ok` is false.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pydantic_core
from django.db import DatabaseError
from mcp import types
from rapidfuzz import fuzz, process

from records.errors import NOT_FOUND, AnchorError
from workflow.id_kinds import explain_not_found
from workflow.mcp import elicitation, sdk, tool_list
from workflow.mcp.arguments import ArgumentChecker, quoted
from workflow.mcp.bounded_calls import http_call_tag, run_bounded
from workflow.mcp.envelope import refused
from workflow.scope import Scope, scope_for_request

_checkers: dict[str, ArgumentChecker] = {}


def checker_for(tool: Any) -> ArgumentChecker:
    """The tool's checker, built once from the very schema tools/list publishes."""
    checker = _checkers.get(tool.name)
    if checker is None or checker.arg_model is not tool.fn_metadata.arg_model:
        checker = ArgumentChecker(tool.name, tool.parameters, tool.fn_metadata.arg_model)
        _checkers[tool.name] = checker
    return checker


def envelope_result(envelope: dict[str, Any]) -> types.CallToolResult:
    structured = pydantic_core.to_jsonable_python(envelope, fallback=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reply_text(structured))],
        structuredContent=structured,
        isError=not structured.get("ok", False),
    )


def reply_text(structured: Any) -> str:
    """The JSON text a model reads: no padding after separators, which is a tenth of a reply."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def unknown_tool_message(name: str) -> str:
    """What a call to a tool this server does not serve is told (JSON-RPC -32602)."""
    served = sdk.served_tool_names()
    suggestion = process.extractOne(name, served, scorer=fuzz.ratio, score_cutoff=70)
    hint = f" Did you mean `{suggestion[0]}`?" if suggestion else ""
    return (
        f"No tool named {quoted(name[:100])} is served here.{hint} tools/list shows the tools "
        "this server offers."
    )


async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    tool = tool_list.callable_tool(name)  # known: sdk.refuse_unknown_tools answers the rest
    try:
        kwargs = checker_for(tool).check(arguments)
    except AnchorError as exc:
        return envelope_result(dict(refused(exc)))
    if kwargs.get("ask_user") is True and name == "commit_import":
        return envelope_result(await elicitation.commit_import_asking(kwargs))
    context, request = sdk.request_context(), sdk.current_request(SimpleNamespace())
    method = sdk.toolset_method(tool, context, request, kwargs)
    envelope = await run_bounded(
        lambda: _kind_explained(scope_for_request(request), method(**kwargs)),
        http_call_tag(request, context.request_id),
    )
    if kwargs.get("ask_user") is True and name == "resolve_record":
        envelope = await elicitation.ask_about_resolution(envelope)
    if name == "batch_resolve_records":
        asked = {i for i, item in enumerate(kwargs["requests"]) if item.get("ask_user") is True}
        envelope = await elicitation.ask_about_batch(envelope, asked)
    return envelope_result(envelope)


def _kind_explained(scope: Scope, envelope: dict[str, Any]) -> dict[str, Any]:
    """A NOT_FOUND whose ID is another kind of Anchor ID says which (workflow.id_kinds)."""
    error = envelope.get("error") or {}
    details = error.get("details") or {}
    if envelope.get("ok") or error.get("code") != NOT_FOUND or "expected" not in details:
        return envelope
    try:
        explained = explain_not_found(
            scope, AnchorError(error["code"], error["message"], **details)
        )
    except DatabaseError:  # the refusal as it was is still true, and better than none
        return envelope
    return dict(refused(explained))
