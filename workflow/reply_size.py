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
# What any candidate says twice: its reasons give the match and the score, its collection's name
# (unique in a workspace) the collection_id.
SAID_TWICE = ("match", "score", "collection_id")
SETTLED_NOISE = (*SAID_TWICE, "created_at")  # and when a settled one was made
QUIET = {"archived_at": None, "archived": False, "links_truncated": False}
# A write's timestamps: provisional in a preview, and not what the agent reports after a commit.
TIMESTAMPS = ("created_at", "updated_at", "committed_at", "expires_at")
NEW_OBJECT_ID = {
    "create_record": "record_id",
    "create_collection": "collection_id",
    "link_records": "relationship_id",
}


def history(page: dict[str, Any], asked_id: str) -> dict[str, Any]:
    """A history page without the ID it was asked for, wherever it repeats: on the page, and in
    each event (with the entity type of an event about that entity itself, the tool's own)."""
    events = [
        {
            k: v
            for k, v in event.items()
            if v != asked_id and not (k == "entity_type" and event["entity_id"] == asked_id)
        }
        for event in page["events"]
    ]
    return {k: v for k, v in page.items() if v != asked_id} | {"events": events}


def resolution(result: dict[str, Any]) -> dict[str, Any]:
    lean = {k: v for k, v in result.items() if k not in RESOLUTION_ECHOES}
    candidates = result.get("candidates", [])
    status = result["status"]
    if status in ("resolved", "no_match"):
        lean.pop("message", None)  # the next_step says what to do
    if status == "resolved":
        # One active exact match: the others are only similar spellings (detail=true has them).
        chosen = [c for c in candidates if c["record_id"] == result["selected_record_id"]]
        # selected_record_id names it; the exact match and active status are the status's,
        # and an exact title match is the title itself (an alias or ID match is still said).
        lean["candidates"] = [
            {k: v for k, v in _settled(c).items() if k not in _said_by_status(c)} for c in chosen
        ]
        if len(candidates) > len(chosen):
            lean["similar_not_shown"] = len(candidates) - len(chosen)
    elif status == "needs_clarification":
        # Every candidate whole but for what says nothing (nulls, false flags) or says it twice:
        # links, data, collection, reasons and creation time tell namesakes apart.
        lean["candidates"] = [
            {k: v for k, v in _quiet(c).items() if k not in SAID_TWICE}
            | {"links": [_quiet(link) for link in c.get("links") or []]}
            for c in candidates
        ]
    else:
        lean["candidates"] = [_settled(c) for c in candidates]
    return {k: v for k, v in lean.items() if v not in (None, [])}  # the status says there is none


def _said_by_status(candidate: dict[str, Any]) -> tuple[str, ...]:
    reasons = candidate.get("reasons") or []
    by_title = all(reason.startswith("exact title match") for reason in reasons)
    return ("record_id", "status", "reasons") if by_title else ("record_id", "status")


def _quiet(item: dict[str, Any]) -> dict[str, Any]:
    """Without the flags and nulls that say nothing: not archived, links not cut."""
    return {k: v for k, v in item.items() if k not in QUIET or v is not QUIET[k]}


def _settled(candidate: dict[str, Any]) -> dict[str, Any]:
    lean = {k: v for k, v in _quiet(candidate).items() if k not in SETTLED_NOISE}
    links = candidate.get("links") or []
    lean["links"] = [_link_line(link) for link in links[:LINKS_SHOWN]]
    if len(links) > LINKS_SHOWN:  # and links_truncated, kept when true: more still exist
        lean["links_more"] = len(links) - LINKS_SHOWN
    return lean


def _link_line(link: dict[str, Any]) -> str:
    """A settled candidate's link in a line, "-works_at-> Acme (companies)" or "<-mentors- Kirat
    (people)": the linked record's title and collection say what it is; its ID is
    get_record_context's."""
    kind = link["relationship_type"]
    arrow = f"-{kind}->" if link["direction"] == "outgoing" else f"<-{kind}-"
    archived = ", archived" if link.get("archived") else ""
    return f"{arrow} {link['title']} ({link['collection']}{archived})"


def prepared(
    result: dict[str, Any], operation: str | None, sent: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`sent`: the prepare tool's arguments. A preview keeps only what they do not already say;
    approval is stated only when needed."""
    drop = ("preview_note", "expires_at", "operation")
    lean = {k: v for k, v in result.items() if k not in drop}
    if not lean.get("requires_human_approval", True):
        del lean["requires_human_approval"]
    if "rows" in lean:  # an import: the collection is the agent's own argument
        lean.pop("collection_id", None)
        lean["rows"] = [_import_row(row) for row in lean["rows"]]
    if "preview" in lean:
        written = _written(lean["preview"], operation, provisional=True)
        lean["preview"] = written if sent is None else _preview_news(written, operation, sent)
        if not lean["preview"]:
            del lean["preview"]
    return lean


def _preview_news(preview: dict[str, Any], operation: str | None, sent: dict[str, Any]) -> Any:
    """What a write's preview says beyond its request: an update's resulting data and version,
    the link an unlink removes, a link that already exists. {} when it only repeats the request."""
    if "items" in preview and isinstance(sent.get("actions"), list):
        actions = sent["actions"]
        news = []
        for item in preview["items"]:
            index = item.get("item_index")
            action = actions[index] if isinstance(index, int) and index < len(actions) else {}
            told = _news(item, item.get("operation"), (action or {}).get("arguments") or {})
            if told:
                news.append({"item_index": index, **told})
        return {"items": news} if news else {}
    if "rows" in preview:
        return preview
    return _news(preview, operation, sent.get("arguments") or {})


def _news(preview: dict[str, Any], operation: str | None, arguments: dict[str, Any]) -> Any:
    out: dict[str, Any] = {}
    for key, value in preview.items():
        if key in ("item_index", "operation") or (key == "created" and value is True):
            continue
        if not isinstance(value, dict):
            out[key] = value
            continue
        inner = {k: v for k, v in value.items() if not _was_sent(k, v, arguments)}
        if operation == "create_record":
            inner.pop("version", None)  # a new record is version 1
        elif operation == "unlink_records":  # its ends are records the agent resolved
            inner = {k: v for k, v in inner.items() if k not in ("source_id", "target_id")}
        elif "collection_id" not in arguments:
            inner.pop("collection_id", None)  # unchanged by a write that does not name it
        if inner:
            out[key] = inner
    return out


def _was_sent(key: str, value: Any, arguments: dict[str, Any]) -> bool:
    """The request said this: the same value, or a batch item's "actions[N]" (whose ID is
    provisional until the commit)."""
    if key not in arguments:
        return False
    sent = arguments[key]
    return sent == value or (isinstance(sent, str) and sent.startswith("actions["))


def _import_row(row: dict[str, Any]) -> dict[str, Any]:
    if row.get("status") != "clean":
        return row  # flagged: every candidate whole
    return {k: v for k, v in row.items() if v not in (None, [])}


# What a committed write returns of what it made: the ID of an object it created, else the
# version to expect next. The rest the agent sent (the IDs of what it changed or unlinked
# among it), and the prepare's preview showed; a link made anew is the expected outcome.
KEPT_AFTER_COMMIT = ("version", "archived_at")


def committed(result: dict[str, Any]) -> dict[str, Any]:
    lean: dict[str, Any] = _written(result, result.get("operation"), provisional=False)
    # A write held for a person keeps its action_id: its message says to commit it again later.
    done = result.get("status") == "committed"
    dropped = ("operation", "replayed", "action_id") if done else ("operation", "replayed")
    lean = {k: v for k, v in lean.items() if k not in dropped}
    if result.get("replayed"):
        lean["replayed"] = True
    if isinstance(lean.get("result"), dict) and result.get("status") == "committed":
        made = lean["result"]
        if isinstance(made.get("items"), list):
            made = {**made, "items": [_made(item, None) for item in made["items"]]}
        lean["result"] = _made(made, result.get("operation"))
    if isinstance(lean.get("review"), dict):
        lean["review"] = _cited(lean["review"])
    return lean


def _made(outcome: Any, operation: str | None) -> Any:
    if not isinstance(outcome, dict):
        return outcome
    new_id = NEW_OBJECT_ID.get(outcome.get("operation", operation) or "")
    out: dict[str, Any] = {}
    for key, value in outcome.items():
        if key in ("operation", "item_index") or (key == "created" and value is True):
            continue  # a batch's items come in order
        if key in ("record", "relationship", "removed_relationship") and isinstance(value, dict):
            kept = (new_id,) if new_id in value else KEPT_AFTER_COMMIT
            value = {k: v for k, v in value.items() if k in kept}
        elif key == "review" and isinstance(value, dict):
            value = _cited(value)
        if value != {}:
            out[key] = value
    return out


def _cited(review: dict[str, Any]) -> dict[str, Any]:
    """A fresh review of what was written: the ID the next write cites (its status is
    resolved, its record the one just made)."""
    return {
        k: v
        for k, v in review.items()
        if (k.endswith("_id") and k != "selected_record_id") or (k == "status" and v != "resolved")
    }


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
