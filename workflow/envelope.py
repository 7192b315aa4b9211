"""The result envelope every tool returns, and the one place errors become envelopes.

{"ok": true, "result": ...} or {"ok": false, "error": {"code", "message", "details"?}}. An
unexpected exception is logged to stderr and reported as STORAGE_ERROR; never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, close_old_connections
from typing_extensions import NotRequired, TypedDict

from records.errors import STORAGE_ERROR, AnchorError

logger = logging.getLogger("anchor.tools")


class ToolError(TypedDict):
    code: str
    message: str
    details: NotRequired[dict[str, Any]]


class ToolResult(TypedDict):
    ok: bool
    result: NotRequired[Any]
    error: NotRequired[ToolError]


def run_tool(call: Callable[[], Any]) -> ToolResult:
    # A long-lived server must not reuse a connection the database has dropped.
    close_old_connections()
    try:
        result = call()
    except AnchorError as exc:
        return {"ok": False, "error": exc.as_dict()}  # type: ignore[typeddict-item]
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
        close_old_connections()
    return {"ok": True, "result": result}
