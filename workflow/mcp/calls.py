"""tools/call, answered by Anchor rather than by the SDK's FastMCP path.

Every call goes the same way on every transport: arguments checked by `workflow.mcp.arguments`
exactly as sent, the tool run on Django's worker thread with its queries bounded in time
(`records.query_bounds`), and the envelope returned as `structuredContent` with `isError` set
exactly when `ok` is false. A cancelled call stops its queries and rolls back; the SDK
adaptation in `workflow.mcp.server` makes sure it gets no reply.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import pydantic_core
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError
from mcp import types
from rapidfuzz import fuzz, process

from records.errors import INVALID_INPUT, NOT_FOUND, AnchorError
from records.query_bounds import QueryBound, bounded_queries, cancel_tagged_statements
from workflow.id_kinds import explain_not_found
from workflow.mcp import elicitation, sdk, tool_list
from workflow.mcp.arguments import ArgumentChecker, quoted
from workflow.scope import Scope, scope_for_request

_checkers: dict[str, ArgumentChecker] = {}


def checker_for(tool: Any) -> ArgumentChecker:
    """The tool's checker, built once from the very schema tools/list publishes."""
    checker = _checkers.get(tool.name)
    if checker is None or checker.arg_model is not tool.fn_metadata.arg_model:
        checker = ArgumentChecker(tool.name, tool.parameters, tool.fn_metadata.arg_model)
        _checkers[tool.name] = checker
    return checker


def check_as_tool(tool_name: str, arguments: dict[str, Any], field: str) -> None:
    """Check a batch item's arguments exactly as the tool itself checks them.

    The refusal names the item (`requests[2].where[0].op`); nothing runs. A batch item is
    checked by the read tool's published schema whether or not this profile serves the tool.
    """
    tool = tool_list.registered(tool_name)
    if tool is None:
        return  # not a registered tool: the batch's own parse refuses it
    try:
        checker_for(tool).check(arguments)
    except AnchorError as exc:
        inner = exc.details.get("field", "arguments")
        details = {**exc.details, "field": f"{field}.{inner}"}
        raise AnchorError(exc.code, f"{field}: {exc.message}", **details) from None


def envelope_result(envelope: dict[str, Any]) -> types.CallToolResult:
    structured = pydantic_core.to_jsonable_python(envelope, fallback=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reply_text(structured))],
        structuredContent=structured,
        isError=not structured.get("ok", False),
    )


def reply_text(structured: dict[str, Any]) -> str:
    """The JSON text a model reads: no padding after separators, which is a tenth of a reply."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def refusal(error: AnchorError) -> types.CallToolResult:
    return envelope_result({"ok": False, "error": error.as_dict()})


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
    tool = sdk.served_tool(name)
    if tool is None:  # refused before this as -32602 (sdk.refuse_unknown_tools); kept safe
        return refusal(AnchorError(INVALID_INPUT, unknown_tool_message(name), field="name"))
    try:
        kwargs = checker_for(tool).check(arguments)
    except AnchorError as exc:
        return refusal(exc)
    if kwargs.get("ask_user") is True and name == "commit_import":
        return envelope_result(await elicitation.commit_import_asking(kwargs))
    envelope = await _run(tool, kwargs)
    if kwargs.get("ask_user") is True and name == "resolve_record":
        envelope = await elicitation.ask_about_resolution(envelope)
    return envelope_result(envelope)


async def _run(tool: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    context = sdk.request_context()
    request = sdk.current_request(SimpleNamespace())
    method = sdk.toolset_method(tool, context, request, kwargs)
    tag = _http_call_tag(request, context.request_id)
    bound = QueryBound(timeout_s=settings.ANCHOR_QUERY_TIMEOUT_S, tag=tag)
    with _in_flight(tag, bound):
        result: dict[str, Any] = await run_bounded(
            lambda: _kind_explained(scope_for_request(request), method(**kwargs)), bound
        )
    return result


def _kind_explained(scope: Scope, envelope: dict[str, Any]) -> dict[str, Any]:
    """A NOT_FOUND whose ID is another kind of Anchor ID says which (workflow.id_kinds)."""
    error = envelope.get("error") or {}
    details = error.get("details") or {}
    if envelope.get("ok") or error.get("code") != NOT_FOUND or "expected" not in details:
        return envelope
    refused = AnchorError(error["code"], error["message"], **details)
    try:
        explained = explain_not_found(scope, refused)
    except DatabaseError:  # the refusal as it was is still true, and better than none
        return envelope
    return {"ok": False, "error": explained.as_dict()}


# --- cancelling a call over HTTP ----------------------------------------------------------------
# Over stdio the SDK delivers notifications/cancelled to the running request itself. Over HTTP
# it cannot: django-mcp-server runs the SDK stateless, one POST per message, so the cancel
# arrives as a POST of its own (anchor_site.http.views hands it to cancel_http_call). A call
# is found by its session and JSON-RPC id: in this process through the table below, in any
# other process through its PostgreSQL statement, which carries the same tag.

_calls_in_flight: dict[str, QueryBound] = {}
_cancelled_calls: set[str] = set()
_calls_lock = threading.Lock()


def _http_call_tag(request: Any, request_id: Any) -> str:
    headers = getattr(request, "headers", None)
    session_key = headers.get(sdk.SESSION_ID_HEADER) if headers is not None else None
    return call_tag(session_key, request_id) if session_key else ""


def call_tag(session_key: str, request_id: Any) -> str:
    """The name of one call in one HTTP session: no session key in it, only a digest."""
    digest = hashlib.sha256(session_key.encode()).hexdigest()[:20]
    return f"anchor:{digest}:{str(request_id)[:30]}"


@contextmanager
def _in_flight(tag: str, bound: QueryBound) -> Iterator[None]:
    if not tag:
        yield
        return
    with _calls_lock:
        _calls_in_flight[tag] = bound
    try:
        yield
    finally:
        with _calls_lock:
            if _calls_in_flight.get(tag) is bound:
                del _calls_in_flight[tag]
            if bound.cancelled.is_set():
                _cancelled_calls.add(tag)


def was_cancelled(session_key: str, request_id: Any) -> bool:
    """Whether this POST's call was cancelled (once asked, forgotten): its reply is not sent."""
    tag = call_tag(session_key, request_id)
    with _calls_lock:
        if tag in _cancelled_calls:
            _cancelled_calls.discard(tag)
            return True
    return False


def cancel_http_call(session_key: str, request_id: Any) -> None:
    """Cancel the session's call with this JSON-RPC id, wherever it runs; nothing if none.

    Run on the cancelling request's own thread (it may query PostgreSQL)."""
    tag = call_tag(session_key, request_id)
    with _calls_lock:
        bound = _calls_in_flight.get(tag)
    if bound is not None:
        bound.cancel()
        return
    cancel_tagged_statements(tag)


async def run_bounded(call: Callable[[], Any], bound: QueryBound | None = None) -> Any:
    """Run `call` on Django's worker thread with every query bounded in time and stopped if
    the request is cancelled (tools, and resources alike)."""
    if bound is None:
        bound = QueryBound(timeout_s=settings.ANCHOR_QUERY_TIMEOUT_S)

    def bounded() -> Any:
        with bounded_queries(bound):
            return call()

    try:
        # thread_sensitive: Django's connections belong to one thread (the request's, over
        # HTTP), and a cancelled await does not stop that thread: the bound does.
        return await sync_to_async(bounded, thread_sensitive=True)()
    except anyio.get_cancelled_exc_class():
        bound.cancel()
        raise
