"""JSON answers to a request the database failed, and to any error no view answered: every client
here reads JSON, so a database fault names its cause and when to retry, anything else is a 500.
"""

from __future__ import annotations

import sys
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, JsonResponse

from anchor_site.db_pool import why_no_connection
from workflow.mcp.jsonrpc import INTERNAL_ERROR, error_body

# How long a client should wait before retrying when the database failed its request.
RETRY_AFTER_S = 5


def _retry_later(body: dict[str, Any]) -> JsonResponse:
    return JsonResponse(body, status=503, headers={"Retry-After": str(RETRY_AFTER_S)})


def _advice(reason: str) -> str:
    return f"{reason}; nothing was done. Retry after {RETRY_AFTER_S} seconds."


def database_unavailable(cause: str, reason: str, request_id: Any) -> JsonResponse:
    """/mcp's 503: a JSON-RPC error answering `request_id`, its cause in error.data."""
    return _retry_later(
        error_body(request_id, INTERNAL_ERROR, _advice(reason), data={"cause": cause})
    )


def server_error(request: HttpRequest) -> JsonResponse:
    """handler500 (anchor_site.urls): Django calls it inside the failed request's except."""
    exc = sys.exc_info()[1]
    if isinstance(exc, DatabaseError):
        cause, reason = why_no_connection(exc)
        return _retry_later(
            {
                "error": "temporarily_unavailable",
                "error_description": _advice(reason),
                "cause": cause,
            }
        )
    description = "The server failed unexpectedly; the error is in its log."
    return JsonResponse({"error": "server_error", "error_description": description}, status=500)
