"""JSON-RPC 2.0 facts both transports answer with (error codes, the methods a client may send,
the error reply), taken from the SDK's types; importable before Django is set up.
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
    """A JSON-RPC 2.0 error reply in the SDK's shape; not its JSONRPCError, which cannot carry
    the null id a parse error needs."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
