"""Tool and resource calls run with every query bounded in time, and a call over HTTP can be
cancelled by its session and JSON-RPC id from another request."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import anyio
from asgiref.sync import sync_to_async
from django.conf import settings

from records.query_bounds import QueryBound, bounded_queries, cancel_tagged_statements
from workflow.mcp import sdk

# Over HTTP (stateless, one POST per message) a cancel arrives as a POST of its own
# (anchor_site.http.views): the call is found by its session and JSON-RPC id, in this process
# through the table below, in another through its PostgreSQL statement, which carries the tag.

_calls_in_flight: dict[str, QueryBound] = {}
_cancelled_calls: set[str] = set()
_calls_lock = threading.Lock()


def http_call_tag(request: Any, request_id: Any) -> str:
    headers = getattr(request, "headers", None)
    session_key = headers.get(sdk.SESSION_ID_HEADER) if headers is not None else None
    return call_tag(session_key, request_id) if session_key else ""


def call_tag(session_key: str, request_id: Any) -> str:
    """The name of one call in one HTTP session: no session key in it, only a digest."""
    digest = hashlib.sha256(session_key.encode()).hexdigest()[:20]
    return f"anchor:{digest}:{str(request_id)[:30]}"


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


async def run_bounded(call: Callable[[], Any], tag: str = "") -> Any:
    """Run `call` on Django's worker thread with every query bounded in time and stopped if
    the request is cancelled (tools, and resources alike); a tagged call can be cancelled by
    its tag from another request while it runs."""
    bound = QueryBound(timeout_s=settings.ANCHOR_QUERY_TIMEOUT_S, tag=tag)

    def bounded() -> Any:
        with bounded_queries(bound):
            return call()

    if tag:
        with _calls_lock:
            _calls_in_flight[tag] = bound
    try:
        # thread_sensitive: Django's connections belong to one thread (the request's, over
        # HTTP), and a cancelled await does not stop that thread: the bound does.
        return await sync_to_async(bounded, thread_sensitive=True)()
    except anyio.get_cancelled_exc_class():
        bound.cancel()
        raise
    finally:
        if tag:
            with _calls_lock:
                if _calls_in_flight.get(tag) is bound:
                    del _calls_in_flight[tag]
                if bound.cancelled.is_set():
                    _cancelled_calls.add(tag)
