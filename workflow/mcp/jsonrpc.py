"""JSON-RPC 2.0 facts both transports answer with: error codes, the methods a client may send,
and the error reply itself.

Taken from the MCP SDK's types rather than restated, so the stdio transport and the HTTP view
(`anchor_site.http.views`) answer with the same numbers the SDK uses. Importable before Django
is set up: `manage.py` loads the stdio transport, which needs these, before the settings.
"""

from __future__ import annotations

import typing
from typing import Any

from mcp import types

PARSE_ERROR: int = types.PARSE_ERROR  # -32700
INVALID_REQUEST: int = types.INVALID_REQUEST  # -32600
METHOD_NOT_FOUND: int = types.METHOD_NOT_FOUND  # -32601
INVALID_PARAMS: int = types.INVALID_PARAMS  # -32602
INTERNAL_ERROR: int = types.INTERNAL_ERROR  # -32603

# Every request method of the protocol revision the SDK speaks (initialize, tools/call, ...).
CLIENT_METHODS: frozenset[str] = frozenset(
    typing.get_args(member.model_fields["method"].annotation)[0]
    for member in typing.get_args(types.ClientRequest.model_fields["root"].annotation)
)


def error_body(
    request_id: str | int | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    """A JSON-RPC 2.0 error reply, in the shape (and key order) the SDK answers transport-level
    refusals with. Built here rather than with the SDK's JSONRPCError, which cannot carry the
    null id a parse error or an unreadable request needs. `data` is left out when None."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
