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

from records.errors import STORAGE_ERROR, AnchorError

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
    if not connection.in_atomic_block:
        close_old_connections()


def run_tool(call: Callable[[], Any]) -> ToolResult:
    _drop_dead_connections()
    try:
        result = call()
    except AnchorError as exc:
        return {"ok": False, "error": exc.as_dict()}
    except DatabaseError:
        logger.exception("database error in tool call")
        return {
            "ok": False,
            "error": {
                "code": STORAGE_ERROR,
                "message": "The database refused the operation; nothing was changed. Retry, "
                "and if it persists check the server's log.",
            },
        }
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
