"""What a review, prepare or commit reply leaves out by default: what the agent sent, what it is
told not to use, and what repeats itself. Nothing that tells two records apart is dropped from
an uncertain answer: needs_clarification keeps every candidate whole, and an import's flagged
rows keep theirs.
"""

from __future__ import annotations

from typing import Any

LINKS_SHOWN = 3  # per candidate of a settled answer; links_more counts the rest it has
# Echoes of the request, and deadlines the next_step already sets.
RESOLUTION_ECHOES = ("query", "collection_id", "context_record_ids", "expires_at")
# What a settled candidate says that its status already says.
SETTLED_NOISE = ("match", "score", "created_at")
# A write's timestamps: provisional in a preview, and not what the agent reports after a commit.
TIMESTAMPS = ("created_at", "updated_at", "committed_at", "expires_at")
NEW_OBJECT_ID = {
    "create_record": "record_id",
    "create_collection": "collection_id",
    "link_records": "relationship_id",
}


def resolution(result: dict[str, Any]) -> dict[str, Any]:
    lean = {k: v for k, v in result.items() if k not in RESOLUTION_ECHOES}
    candidates = result.get("candidates", [])
    status = result["status"]
    if status in ("resolved", "no_match"):
        lean.pop("message", None)  # the next_step says what to do
    if status == "resolved":
        # One active exact match: the others are only similar spellings (detail=true has them).
        chosen = [c for c in candidates if c["record_id"] == result["selected_record_id"]]
        lean["candidates"] = [_settled(c) for c in chosen]
        if len(candidates) > len(chosen):
            lean["similar_not_shown"] = len(candidates) - len(chosen)
    elif status == "needs_clarification":
        # Every candidate whole but for what says nothing (the score of an exact match, nulls,
        # false flags): links, data, collection and creation time tell namesakes apart.
        lean["candidates"] = [_uncertain(c) for c in candidates]
    else:
        lean["candidates"] = [_settled(c) for c in candidates]
    return lean


def _uncertain(candidate: dict[str, Any]) -> dict[str, Any]:
    lean = _without_empties(candidate)
    if candidate.get("match") == "exact":
        lean.pop("score", None)
    lean["links"] = [_link(link) for link in candidate.get("links") or []]
    return lean


def _without_empties(candidate: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in candidate.items()
        if not (k == "archived_at" and v is None) and not (k == "links_truncated" and not v)
    }


def _link(link: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in link.items() if not (k == "archived" and v is False)}


def _settled(candidate: dict[str, Any]) -> dict[str, Any]:
    lean = {k: v for k, v in _without_empties(candidate).items() if k not in SETTLED_NOISE}
    links = candidate.get("links") or []
    lean["links"] = [_link(link) for link in links[:LINKS_SHOWN]]
    if len(links) > LINKS_SHOWN:  # and links_truncated, kept when true: more still exist
        lean["links_more"] = len(links) - LINKS_SHOWN
    return lean


def prepared(result: dict[str, Any], operation: str | None) -> dict[str, Any]:
    lean = {k: v for k, v in result.items() if k not in ("preview_note", "expires_at")}
    if "rows" in lean:  # an import: the collection is the agent's own argument
        lean.pop("collection_id", None)
        lean["rows"] = [_import_row(row) for row in lean["rows"]]
    if "preview" in lean:
        lean["preview"] = _written(lean["preview"], operation, provisional=True)
    return lean


def _import_row(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("status") != "clean":
        return row  # flagged: every candidate whole
    return {k: v for k, v in row.items() if v not in (None, [])}


def committed(result: dict[str, Any]) -> dict[str, Any]:
    lean: dict[str, Any] = _written(result, result.get("operation"), provisional=False)
    return lean


def _written(value: Any, operation: str | None, *, provisional: bool) -> Any:
    """Without timestamps, null archived_at and empty aliases; a preview also without the
    made-up ID of an object it creates (the commit gives the real one)."""
    if isinstance(value, list):
        return [_written(item, operation, provisional=provisional) for item in value]
    if not isinstance(value, dict):
        return value
    inner = value.get("operation", operation)
    out = {
        key: _written(item, inner, provisional=provisional)
        for key, item in value.items()
        if key not in TIMESTAMPS
        and not (key == "archived_at" and item is None)
        and not (key == "aliases" and item == [])
    }
    if provisional:
        new_id = NEW_OBJECT_ID.get(inner) if isinstance(inner, str) else None
        if new_id and "operation" not in value:  # the created object, not the batch item
            out.pop(new_id, None)
        if value.get("outcome") == "created":  # an import row's record to be
            out.pop("record_id", None)
    return out
