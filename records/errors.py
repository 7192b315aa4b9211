"""The error vocabulary shared by every door: services, selectors, workflow and tools."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

NOT_FOUND = "NOT_FOUND"
INVALID_INPUT = "INVALID_INPUT"
VERSION_CONFLICT = "VERSION_CONFLICT"
ARCHIVED = "ARCHIVED"
NEEDS_CLARIFICATION = "NEEDS_CLARIFICATION"
REVIEW_REQUIRED = "REVIEW_REQUIRED"
STALE_REVIEW = "STALE_REVIEW"
INCOMPLETE_REVIEW = "INCOMPLETE_REVIEW"
STORAGE_ERROR = "STORAGE_ERROR"
# A statement ran past ANCHOR_QUERY_TIMEOUT_S; it was stopped and nothing was written.
QUERY_TIMEOUT = "QUERY_TIMEOUT"
# The client cancelled the call; it was rolled back, and no reply is sent.
CANCELLED = "CANCELLED"
UNSUPPORTED = "UNSUPPORTED"
AWAITING_APPROVAL = "AWAITING_APPROVAL"


class ErrorBody(TypedDict):
    """An error as the doors return it; the MCP envelope's ToolError has the same shape."""

    code: str
    message: str
    details: NotRequired[dict[str, Any]]


class AnchorError(Exception):
    """A refusal with a stable code, a message naming the field and the fix, and details."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> ErrorBody:
        error: ErrorBody = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return error


def invalid(field: str, message: str, **details: Any) -> AnchorError:
    return AnchorError(INVALID_INPUT, f"{field}: {message}", field=field, **details)


def not_found(kind: str, identifier: object) -> AnchorError:
    return AnchorError(
        NOT_FOUND, f"No {kind} with ID {identifier!r} in this workspace.", id=str(identifier)
    )
