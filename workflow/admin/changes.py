"""What one prepared operation would change, field by field, and its one-line summary.

Updates are compared with the record as it is now (for a write still awaiting a decision that
is exactly what approving would overwrite); nested objects are walked so a reviewer sees
`address.city: Pune → Delhi` rather than two whole objects. The summary is the same picture
squeezed into a line for the queue ("update Kirat: stage onsite → offer").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.validation import canonical_json
from workflow.admin.lookup import Lookup, Ref

VALUE_LIMIT = 300
SUMMARY_LIMIT = 120
MISSING = object()


@dataclass
class FieldChange:
    path: str
    kind: str  # added | changed | removed | unchanged
    before: str = ""
    after: str = ""


@dataclass
class OperationReview:
    """One operation as a reviewer reads it."""

    operation: str
    verb: str
    target: Ref | None = None
    changes: list[FieldChange] = field(default_factory=list)
    link: tuple[Ref, str, Ref] | None = None
    notes: list[str] = field(default_factory=list)


def show(value: Any, limit: int = VALUE_LIMIT) -> str:
    if value is MISSING:
        return ""
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nested_changes(before: Any, after: Any, path: str = "") -> list[FieldChange]:
    """Leaf-level differences between two JSON values; objects are walked key by key."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[FieldChange] = []
        for key in sorted(set(before) | set(after)):
            child = f"{path}.{key}" if path else str(key)
            found += nested_changes(before.get(key, MISSING), after.get(key, MISSING), child)
        return found
    if before is MISSING:
        return [FieldChange(path, "added", after=show(after))]
    if after is MISSING:
        return [FieldChange(path, "removed", before=show(before))]
    if canonical_json(before) == canonical_json(after):
        return []
    return [FieldChange(path, "changed", show(before), show(after))]


def update_changes(current: dict[str, Any], changes: dict[str, Any]) -> list[FieldChange]:
    """A shallow merge's effect: each named key replaces the current value (nested walked)."""
    found: list[FieldChange] = []
    for key in sorted(changes):
        before = current.get(key, MISSING)
        diff = nested_changes(before, changes[key], key)
        found += diff or [FieldChange(key, "unchanged", show(before), show(changes[key]))]
    return found


def _existing(lookup: Lookup, args: dict[str, Any], verb: str) -> OperationReview:
    return OperationReview("", verb, target=lookup.record_ref(args.get("record_id")))


def review_operation(operation: str, args: dict[str, Any], lookup: Lookup) -> OperationReview:
    review = _review(operation, args, lookup)
    review.operation = operation
    return review


def _review(operation: str, args: dict[str, Any], lookup: Lookup) -> OperationReview:
    record = lookup.record(args.get("record_id"))
    if operation == "update_record":
        review = _existing(lookup, args, "update")
        review.changes = update_changes(record.data if record else {}, args.get("changes") or {})
        return review
    if operation == "rename_record":
        review = _existing(lookup, args, "rename")
        before = record.title if record else ""
        review.changes = [FieldChange("title", "changed", before, show(args.get("title")))]
        return review
    if operation in ("add_record_alias", "remove_record_alias"):
        adding = operation == "add_record_alias"
        review = _existing(lookup, args, "add alias to" if adding else "remove alias from")
        alias = show(args.get("alias"))
        review.changes = [
            FieldChange("alias", "added", after=alias)
            if adding
            else FieldChange("alias", "removed", before=alias)
        ]
        return review
    if operation == "archive_record":
        review = _existing(lookup, args, "archive")
        review.changes = [FieldChange("archived", "changed", "no", "yes")]
        return review
    if operation == "set_self":
        review = _existing(lookup, args, "map “me” to")
        review.notes.append("The agent's actor will read this record as “me” from now on.")
        return review
    if operation == "create_record":
        review = OperationReview("", "create", target=None)
        review.notes.append(f"in {lookup.collection_ref(args.get('collection_id')).title}")
        review.changes = [FieldChange("title", "added", after=show(args.get("title")))]
        review.changes += nested_changes({}, args.get("data") or {})
        return review
    if operation == "link_records":
        source, target = (lookup.record_ref(args.get(k)) for k in ("source_id", "target_id"))
        return OperationReview(
            "", "link", link=(source, show(args.get("relationship_type")), target)
        )
    if operation == "unlink_records":
        review = OperationReview("", "unlink")
        review.notes.append(f"relationship {args.get('relationship_id')}")
        return review
    if operation.endswith("collection") or operation.endswith("collection_alias"):
        review = OperationReview("", operation.replace("_", " "))
        if args.get("collection_id"):
            review.target = lookup.collection_ref(args["collection_id"])
        review.changes = nested_changes({}, {k: v for k, v in args.items() if k != "collection_id"})
        return review
    return OperationReview("", operation.replace("_", " "))


def one_line(review: OperationReview, *, against_current: bool = True) -> str:
    """'update Kirat: stage onsite → offer'. Decided writes drop the before side: the record
    has moved on and "before" would be today's value, not the one the write replaced."""
    head = review.verb
    if review.target is not None:
        head = f"{head} {review.target.title}"
    if review.link is not None:
        source, kind, target = review.link
        head = f"{head} {source.title} —{kind}→ {target.title}"
    if review.notes and review.target is None and review.link is None:
        head = f"{head} {review.notes[0]}" if review.verb != "create" else head
    parts = []
    for change in review.changes:
        if change.kind == "added":
            parts.append(f"{change.path} = {change.after}")
        elif change.kind == "removed":
            parts.append(f"{change.path} removed")
        elif against_current and change.before:
            parts.append(f"{change.path} {change.before} → {change.after}")
        else:
            parts.append(f"{change.path} → {change.after}")
    if review.verb == "create":
        title = next((c.after for c in review.changes if c.path == "title"), "")
        where = review.notes[0] if review.notes else ""
        text = f"create {title} {where}".strip()
    else:
        text = f"{head}: {', '.join(parts)}" if parts else head
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"
