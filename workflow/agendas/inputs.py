"""Checks of agenda arguments, before any row is touched; each refusal names the field."""

from __future__ import annotations

from typing import Any

from records import validation as v
from records.errors import invalid
from records.ids import is_valid_id

MAX_ITEMS = 100
MAX_ITEM_CHARS = 2000


def statement(value: Any, field: str, what: str) -> str:
    """A conclusion, reason or outcome: real text, never blank or whitespace."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise invalid(field, f"{what} is required and must be real text; whitespace is not one.")
    return v.description(value, field)


def snapshot(value: Any, field: str = "items") -> list[str]:
    """The exact list, in source order. Numbering comes from position, 1 to n."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_ITEMS:
        raise invalid(
            field,
            f"must be the exact list of 1-{MAX_ITEMS} items, copied in source order (one "
            "string per item, without its number).",
        )
    items = []
    for index, item in enumerate(value):
        text = v.text(f"{field}[{index}]", item, max_length=MAX_ITEM_CHARS)
        items.append(text)
    return items


def source(reference: Any, unverified_reason: Any) -> tuple[str, str]:
    """Exactly one of a source reference and an explicit reason there is none."""
    has_reference = reference is not None and not (
        isinstance(reference, str) and not reference.strip()
    )
    has_reason = unverified_reason is not None and not (
        isinstance(unverified_reason, str) and not unverified_reason.strip()
    )
    if has_reference and has_reason:
        raise invalid(
            "unverified_source_reason",
            "give either source_reference or unverified_source_reason, not both.",
        )
    if has_reference:
        return v.description(reference, "source_reference"), ""
    if has_reason:
        return "", v.description(unverified_reason, "unverified_source_reason")
    raise invalid(
        "source_reference",
        "say where the list comes from (message, file, review, search), or pass "
        "unverified_source_reason explaining why the list has no checkable source.",
    )


def agenda_id(value: Any) -> str:
    if not is_valid_id(value):
        raise invalid("agenda_id", f"{value!r} is not an agenda_id (returned by agenda_start).")
    return str(value)


def token(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise invalid(
            "cursor_token",
            "pass the cursor_token from the latest agenda result (agenda_view gives it).",
        )
    return value.strip()


def record_ids(value: Any) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_ITEMS:
        raise invalid("record_ids", f"must list 1-{MAX_ITEMS} record IDs, in agenda order.")
    ids: list[str] = []
    for index, item in enumerate(value):
        record_id = v.record_id(item, f"record_ids[{index}]")
        if record_id in ids:
            raise invalid(f"record_ids[{index}]", f"{record_id} is listed twice.")
        ids.append(record_id)
    return ids
