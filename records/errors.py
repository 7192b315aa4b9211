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
    """An error as the doors return it, and as the MCP envelope carries it."""

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


# Where an ID of each kind comes from: the fix a NOT_FOUND names.
ID_SOURCES = {
    "record": "take record IDs from resolve_record, search_records or get_record_context",
    "collection": "take collection IDs from list_collections or discover_collections",
    "relationship": "take relationship IDs from get_record_context's links (a removed link "
    "is gone: read the context again)",
    "action": "use the action_id a prepare tool returned",
    "review": "cite a discovery_id or resolution_id from discover_collections or resolve_record",
    "agenda": "take agenda IDs from agenda_start or workspace_digest",
}


def not_found(kind: str, identifier: object, field: str | None = None) -> AnchorError:
    """No `kind` with this ID here, naming the argument that held it and where such IDs come
    from. `details.expected` is the kind, so a caller that can tell what the ID is instead (a
    resolution_id sent as an action_id) can say so."""
    field = field or f"{kind.replace(' ', '_')}_id"
    source = ID_SOURCES.get(kind)
    article = "an" if kind[0] in "aeiou" else "a"
    fix = f" It must be {article} {kind} ID: {source}." if source else ""
    return AnchorError(
        NOT_FOUND,
        f"{field}: no {kind} with ID {identifier!r} in this workspace.{fix}",
        id=str(identifier),
        field=field,
        expected=kind,
    )
