"""The result envelope every tool returns, and the one place errors become envelopes.

{"ok": true, "result": ...} or {"ok": false, "error": {"code", "message", "details"?}}. An
unexpected exception is logged to stderr and reported as STORAGE_ERROR; never a traceback.
"""

# No `from __future__ import annotations` here: TypedDict must see NotRequired at class
# creation, or the SDK's output schema marks every key required.

import logging
from collections.abc import Callable
from typing import Any, NotRequired

from django.db import DatabaseError, close_old_connections, connection
from typing_extensions import TypedDict

from records.errors import CANCELLED, QUERY_TIMEOUT, STORAGE_ERROR, AnchorError
from records.query_bounds import CallCancelled, current_bound
from records.storage_faults import UNKNOWN, left_read_only, storage_fault

logger = logging.getLogger("anchor.tools")


class ToolError(TypedDict):
    code: str
    message: str
    details: NotRequired[dict[str, Any]]


class ToolResult(TypedDict):
    ok: bool
    result: NotRequired[Any]
    # The SDK fills absent keys with null in structuredContent, so the schema must allow it.
    error: NotRequired[ToolError | None]


def _drop_dead_connections() -> None:
    # A long-lived server must not reuse a connection the database has dropped. Inside an
    # enclosing transaction (a test, a batch) the connection is in use and must stay open.
    # With CONN_MAX_AGE=0 (HTTP) the request's own start and end already open and close it:
    # closing here would throw away the statement bounds just set on it (run_bounded).
    if not connection.in_atomic_block and connection.settings_dict.get("CONN_MAX_AGE") != 0:
        close_old_connections()
        if left_read_only(connection):  # else the first write after a heal would fail
            connection.close()


# Nobody hears this reply (a cancelled request gets none); the rollback is the point.
CANCELLED_REPLY: ToolResult = {
    "ok": False,
    "error": {"code": CANCELLED, "message": "The call was cancelled; nothing written."},
}


def _storage_error(exc: DatabaseError) -> ToolResult:
    fault = storage_fault(exc)
    if fault.cause == UNKNOWN:
        logger.exception("database error in tool call")
    else:  # a known cause needs its one line, not a traceback
        logger.warning("a tool call was refused: %s (%s)", fault.cause, exc)
    # The failed connection may hold what failed it, and Django never replaces a SQLite
    # connection for an error (it counts any open one as usable): one that met a
    # write-protected file opened it read-only and stays so once the file is writable again.
    # The next call opens a new one, so fixing the cause is enough; no restart.
    if not connection.in_atomic_block:
        connection.close()
    return {
        "ok": False,
        "error": {
            "code": STORAGE_ERROR,
            "message": fault.message,
            "details": {"cause": fault.cause},
        },
    }


def run_tool(call: Callable[[], Any]) -> ToolResult:
    _drop_dead_connections()
    try:
        result = call()
    except AnchorError as exc:
        return {"ok": False, "error": exc.as_dict()}
    except CallCancelled:
        return CANCELLED_REPLY
    except DatabaseError as exc:
        bound = current_bound()
        if bound is not None and bound.cancelled.is_set():
            return CANCELLED_REPLY  # interrupted while its rows were fetched
        if bound is not None and bound.timed_out:
            logger.warning("a tool call's statement ran past %ss; stopped", bound.timeout_s)
            return {
                "ok": False,
                "error": {
                    "code": QUERY_TIMEOUT,
                    "message": f"The query ran longer than {bound.timeout_s:g} s and was "
                    "stopped; nothing was changed. Narrow it (fewer where conditions or in "
                    "values, a collection_id, a smaller limit) and try again.",
                },
            }
        return _storage_error(exc)
    except Exception:
        logger.exception("unexpected error in tool call")
        return {
            "ok": False,
            "error": {
                "code": STORAGE_ERROR,
                "message": "The server failed unexpectedly; nothing was changed. The error is "
                "in the server's log.",
            },
        }
    finally:
        _drop_dead_connections()
    return {"ok": True, "result": result}
