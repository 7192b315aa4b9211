"""Checks for read arguments: bounds, IDs, field paths and timestamps, with fix-it messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from records import validation as v
from records.errors import invalid
from records.field_paths import data_keys

MAX_FIELD_DEPTH = 32
MAX_KEY_LENGTH = 200
MAX_RELATIONSHIP_TYPES = 20
DIRECTIONS = ("outgoing", "incoming", "both")


def bounded_int(value: Any, field: str, *, low: int, high: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise invalid(field, f"must be an integer from {low} to {high}, got {value!r}.")


def optional_text(value: Any, field: str, *, max_length: int) -> str | None:
    """A non-blank string, or None. Blank is refused so an empty box is never a silent no-op."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(field, f"must be a string, got {type(value).__name__}; omit it to skip.")
    if not value.strip():
        raise invalid(field, "is blank; omit it instead of sending an empty string.")
    if len(value) > max_length:
        raise invalid(field, f"is {len(value)} characters; the limit is {max_length}.")
    v.reject_nul(field, value)
    return value


def field_key(key: Any, field: str) -> str:
    if not isinstance(key, str):
        raise invalid(field, f"keys must be strings, got {type(key).__name__}.")
    if len(key) > MAX_KEY_LENGTH:
        raise invalid(field, f"key is longer than {MAX_KEY_LENGTH} characters.")
    if any(c in v.FORBIDDEN_KEY_CHARS or ord(c) < 32 or ord(c) == 127 for c in key):
        # Stored keys can never contain these, and refusing them keeps JSON paths unambiguous.
        raise invalid(
            field, f"key {key!r} contains a double quote, backslash or control character."
        )
    return key


def field_path(value: Any, field: str) -> list[str]:
    """A field is a list of keys (["offer", "ctc"]) because keys may themselves contain dots."""
    if isinstance(value, str):
        keys = json.dumps(data_keys(value), ensure_ascii=False)
        raise invalid(
            field, f"must be a list of keys from the top of data such as {keys}, not a string."
        )
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_FIELD_DEPTH:
        raise invalid(field, f'must be a list of 1-{MAX_FIELD_DEPTH} keys, e.g. ["offer", "ctc"].')
    return [field_key(key, field) for key in value]


def relationship_types(value: Any, field: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_RELATIONSHIP_TYPES:
        raise invalid(
            field,
            f"must be a list of 1-{MAX_RELATIONSHIP_TYPES} relationship type names; omit it "
            "to follow every type.",
        )
    return sorted({v.relationship_type(item, field) for item in value})


def direction(value: Any, field: str, *, default: str) -> str:
    if value is None:
        return default
    if value not in DIRECTIONS:
        raise invalid(field, f"must be one of {', '.join(DIRECTIONS)}, got {value!r}.")
    return str(value)


def link_filter(value: dict[str, Any], field: str) -> tuple[list[str] | None, str]:
    """A link filter's relationship_types (None: every type) and direction (by default both)."""
    types = relationship_types(value.get("relationship_types"), f"{field}.relationship_types")
    return types, direction(value.get("direction"), f"{field}.direction", default="both")


def timestamp(value: Any, field: str) -> datetime:
    """ISO 8601; a timestamp without an offset is taken as UTC, the server's storage zone."""
    if not isinstance(value, str):
        raise invalid(field, "must be an ISO 8601 timestamp string such as 2026-03-01T12:00:00Z.")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise invalid(
            field, f"{value!r} is not an ISO 8601 timestamp; use e.g. 2026-03-01T12:00:00Z."
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def only_keys(value: dict[str, Any], field: str, allowed: set[str], required: set[str]) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise invalid(
            field, f"unknown key(s) {unknown}; allowed keys are {sorted(allowed)}.", keys=unknown
        )
    missing = sorted(required - set(value))
    if missing:
        raise invalid(field, f"missing required key(s) {missing}.", keys=missing)
