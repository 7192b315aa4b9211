"""Checks of agenda arguments, before any row is touched; each refusal names the field."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from records import validation as v
from records.errors import invalid
from records.ids import is_valid_id

MAX_ITEMS = 100
MAX_ITEM_CHARS = 2000

# The source's own numbering or bullet ("1. ", "2) ", "(3) ", "- "): the agenda numbers items
# by position, so keeping it would show "1. 1. First".
SOURCE_MARKER = re.compile(r"^\s*(?:\(\d{1,4}\)|\d{1,4}[.)]|[-*•])\s+")


def is_blank(text: str) -> bool:
    """True when nothing visible is left: whitespace and format characters (Cf: zero-width
    space and joiners, word joiner, byte-order mark) say nothing, so they are not a statement."""
    return all(c.isspace() or unicodedata.category(c) == "Cf" for c in text)


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and is_blank(value))


def statement(value: Any, field: str, what: str) -> str:
    """A conclusion, reason or outcome: real text, never blank, whitespace or invisible."""
    if not _present(value):
        raise invalid(
            field,
            f"{what} is required and must be real text; whitespace and invisible characters "
            "are not one.",
        )
    return v.description(value, field)


def snapshot(value: Any, field: str = "items") -> list[str]:
    """The exact list, in source order. Numbering comes from position, 1 to n, so a leading
    number or bullet the source gave an item is dropped; the rest of its text is kept exactly."""
    if not 1 <= len(value) <= MAX_ITEMS:
        raise invalid(
            field,
            f"must be the exact list of 1-{MAX_ITEMS} items, copied in source order (one "
            "string per item, without its number).",
        )
    items = []
    for index, item in enumerate(value):
        name = f"{field}[{index}]"
        item = SOURCE_MARKER.sub("", item, count=1)
        if is_blank(item):
            raise invalid(name, "is blank (or only its number); give the item's text.")
        items.append(v.text(name, item, max_length=MAX_ITEM_CHARS))
    return items


def source(reference: Any, unverified_reason: Any) -> tuple[str, str]:
    """Exactly one of a source reference and an explicit reason there is none."""
    has_reference, has_reason = _present(reference), _present(unverified_reason)
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


def token(value: str) -> str:
    if not value.strip() or len(value) > 100:
        raise invalid(
            "cursor_token",
            "pass the cursor_token from the latest agenda result (agenda_view gives it).",
        )
    return value.strip()


def record_ids(value: Any) -> list[str]:
    if not 1 <= len(value) <= MAX_ITEMS:
        raise invalid("record_ids", f"must list 1-{MAX_ITEMS} record IDs, in agenda order.")
    ids: list[str] = []
    for index, item in enumerate(value):
        record_id = v.record_id(item, f"record_ids[{index}]")
        if record_id in ids:
            raise invalid(f"record_ids[{index}]", f"{record_id} is listed twice.")
        ids.append(record_id)
    return ids
