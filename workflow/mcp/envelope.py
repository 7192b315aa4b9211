"""The result envelope every tool returns, and the one place errors become envelopes.

{"ok": true, "result": ...} or {"ok": false, "error": {"code", "message", "details"?}}. An
unexpected exception is logged to stderr and reported as STORAGE_ERROR; never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from django.db import DatabaseError, close_old_connections, connection

from records.errors import CANCELLED, QUERY_TIMEOUT, STORAGE_ERROR, AnchorError, ErrorBody
from records.query_bounds import CallCancelled, current_bound
from records.storage_faults import UNKNOWN, left_read_only, storage_fault

logger = logging.getLogger("anchor.tools")


class ToolResult(TypedDict):
    ok: bool
    result: NotRequired[Any]
    error: NotRequired[ErrorBody]


def refused(error: AnchorError) -> ToolResult:
    return {"ok": False, "error": error.as_dict()}


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
CANCELLED_CALL = AnchorError(CANCELLED, "The call was cancelled; nothing written.")


def _database_refusal(exc: DatabaseError) -> AnchorError:
    """What a failed statement tells the agent: its call was cancelled, it ran too long, or
    the storage refused it (in words)."""
    bound = current_bound()
    if bound is not None and bound.cancelled.is_set():
        return CANCELLED_CALL  # interrupted while its rows were fetched
    if bound is not None and bound.timed_out:
        logger.warning("a tool call's statement ran past %ss; stopped", bound.timeout_s)
        return AnchorError(
            QUERY_TIMEOUT,
            f"The query ran longer than {bound.timeout_s:g} s and was stopped; nothing was "
            "changed. Narrow it (fewer where conditions or in values, a collection_id, a "
            "smaller limit) and try again.",
        )
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
    return AnchorError(STORAGE_ERROR, fault.message, cause=fault.cause)


def run_tool(call: Callable[[], Any]) -> ToolResult:
    _drop_dead_connections()
    try:
        return {"ok": True, "result": call()}
    except AnchorError as exc:
        return refused(exc)
    except CallCancelled:
        return refused(CANCELLED_CALL)
    except DatabaseError as exc:
        return refused(_database_refusal(exc))
    except Exception:
        logger.exception("unexpected error in tool call")
        return refused(
            AnchorError(
                STORAGE_ERROR,
                "The server failed unexpectedly; nothing was changed. The error is in the "
                "server's log.",
            )
        )
    finally:
        _drop_dead_connections()
