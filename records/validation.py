"""Bounds and shapes of everything the store accepts, checked before any row is touched."""

from __future__ import annotations

import json
import math
from typing import Any

from records.errors import invalid
from records.ids import is_valid_id

MAX_TITLE = 300
MAX_NAME = 100
MAX_DESCRIPTION = 2000
MAX_DATA_BYTES = 16 * 1024
MAX_ALIASES = 20
MAX_TYPICAL_FIELDS = 20
MAX_JSON_DEPTH = 32
FORBIDDEN_KEY_CHARS = {'"', "\\"}


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8: the form that sizes and compares JSON values."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _check_key(field: str, key: object) -> None:
    if not isinstance(key, str):
        raise invalid(field, f"object keys must be strings, got {type(key).__name__}.")
    if any(c in FORBIDDEN_KEY_CHARS or ord(c) < 32 or ord(c) == 127 for c in key):
        raise invalid(
            field,
            f"key {key!r} contains a double quote, backslash or control character; rename it.",
        )


def reject_nul(field: str, value: str) -> None:
    # PostgreSQL cannot hold \u0000 in jsonb or text, and SQLite can: refuse it on both, so
    # the same input is accepted or refused the same way whichever backend is behind it.
    if "\x00" in value:
        raise invalid(
            field, "contains a NUL character (\\u0000), which cannot be stored; remove it."
        )


def _check_json_value(field: str, value: Any, depth: int) -> None:
    if depth > MAX_JSON_DEPTH:
        raise invalid(field, f"nesting deeper than {MAX_JSON_DEPTH} levels; flatten the data.")
    if isinstance(value, str):
        reject_nul(field, value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise invalid(field, "numbers must be finite (no NaN or Infinity).")
    elif isinstance(value, list):
        for item in value:
            _check_json_value(field, item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_key(field, key)
            _check_json_value(field, item, depth + 1)
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise invalid(field, f"{type(value).__name__} is not a JSON value.")


def json_object(field: str, value: Any, *, max_bytes: int = MAX_DATA_BYTES) -> dict[str, Any]:
    """A finite JSON object with string keys whose canonical form fits in max_bytes."""
    if not isinstance(value, dict):
        raise invalid(field, f"must be a JSON object, got {type(value).__name__}.")
    _check_json_value(field, value, 0)
    size = len(canonical_json(value).encode("utf-8"))
    if size > max_bytes:
        raise invalid(
            field,
            f"is {size} bytes as canonical JSON; the limit is {max_bytes}. Store less, or split "
            "it across linked records.",
            size=size,
            limit=max_bytes,
        )
    return value


def text(field: str, value: Any, *, max_length: int, allow_blank: bool = False) -> str:
    if not isinstance(value, str):
        raise invalid(field, f"must be a string, got {type(value).__name__}.")
    stripped = value.strip()
    if not stripped and not allow_blank:
        raise invalid(field, "must not be blank.")
    if len(stripped) > max_length:
        raise invalid(
            field, f"is {len(stripped)} characters; the limit is {max_length}.", limit=max_length
        )
    if any(ord(c) < 32 and c not in "\n\t" for c in stripped):
        raise invalid(field, "contains control characters.")
    return stripped


def title(value: Any, field: str = "title") -> str:
    return text(field, value, max_length=MAX_TITLE)


def name(value: Any, field: str = "name") -> str:
    result = text(field, value, max_length=MAX_NAME)
    if "\n" in result or "\t" in result:
        raise invalid(field, "must be a single line.")
    return result


def description(value: Any, field: str, *, allow_blank: bool = False) -> str:
    return text(field, value, max_length=MAX_DESCRIPTION, allow_blank=allow_blank)


def typical_fields(value: Any, field: str = "typical_fields") -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_TYPICAL_FIELDS:
        raise invalid(field, f"must be a list of 1-{MAX_TYPICAL_FIELDS} field names.")
    result = [name(item, f"{field}[{index}]") for index, item in enumerate(value)]
    for item in result:
        _check_key(field, item)
    return result


def record_id(value: Any, field: str = "record_id") -> str:
    if not is_valid_id(value):
        raise invalid(field, f"{value!r} is not a record ID (a UUID such as returned by search).")
    return str(value)


def entity_id(value: Any, field: str) -> str:
    if not is_valid_id(value):
        raise invalid(field, f"{value!r} is not an ID (a lowercase UUID returned by a tool).")
    return str(value)


def expected_version(value: Any, field: str = "expected_version") -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise invalid(field, "must be the record's current version, a positive integer.")


def relationship_type(value: Any, field: str = "relationship_type") -> str:
    return name(value, field)
