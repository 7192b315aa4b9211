"""What one prepared operation would change, as a reviewer reads it, and its one-line summary.

Every operation says what it would change as plain data (workflow.operations.change); this
module turns that into names and short values, the same way for every operation, so nothing
here knows an operation by name. Updates are compared with the record as it is now (for a
write still awaiting a decision that is exactly what approving would overwrite). The summary is
the same picture squeezed into a line for the queue ("update Kirat: stage onsite → offer").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from records.admin.common import shorten
from records.admin.timeline import FieldChange, show
from workflow.admin.lookup import Lookup, Ref
from workflow.operations import operation_named, operation_names
from workflow.operations.change import FieldChange as FieldData

VALUE_LIMIT = 300
SUMMARY_LIMIT = 120


@dataclass
class OperationReview:
    """One operation as a reviewer reads it."""

    verb: str
    target: Ref | None = None
    changes: list[FieldChange] = field(default_factory=list)
    links: list[tuple[Ref, str, Ref]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    created_in: Ref | None = None  # a new record's collection
    summary: str = ""  # what the operation does, in its definition's words


def _shown(change: FieldData) -> FieldChange:
    before = "" if change.kind == "added" else show(change.before, VALUE_LIMIT)
    after = "" if change.kind == "removed" else show(change.after, VALUE_LIMIT)
    return FieldChange(change.path, change.kind, before, after)


def ids_named(operations: Iterable[tuple[str, dict[str, Any]]]) -> tuple[set[str], set[str]]:
    """The records and collections these (operation, arguments) name, to fetch in one Lookup."""
    records: set[str] = set()
    collections: set[str] = set()
    known = operation_names()
    for operation, args in operations:
        if operation in known:
            named_records, named_collections = operation_named(operation).named_ids(args)
            records |= named_records
            collections |= named_collections
    return records, collections


def review_operation(operation: str, args: dict[str, Any], lookup: Lookup) -> OperationReview:
    if operation not in operation_names():  # a stored action of an operation since retired
        return OperationReview(operation.replace("_", " "))
    definition = operation_named(operation)
    change = definition.change(args, lookup)
    review = OperationReview(change.verb, summary=definition.summary)
    if change.record_id:
        review.target = lookup.record_ref(change.record_id)
    elif change.collection_id:
        review.target = lookup.collection_ref(change.collection_id)
    if change.created_in:
        review.created_in = lookup.collection_ref(change.created_in)
        review.notes.append(f"in {review.created_in.title}")
    review.changes = [_shown(c) for c in change.fields]
    for link in change.links:
        if link.source_id is None or link.target_id is None:  # a link named by its ID alone
            review.notes.append(f"relationship {link.relationship_id}")
            continue
        source, target = lookup.record_ref(link.source_id), lookup.record_ref(link.target_id)
        review.links.append((source, show(link.relationship_type, VALUE_LIMIT), target))
    review.notes += change.notes
    return review


def one_line(review: OperationReview, *, against_current: bool = True) -> str:
    """'update Kirat: stage onsite → offer'. Decided writes drop the before side: the record
    has moved on and "before" would be today's value, not the one the write replaced."""
    if review.created_in is not None:
        title = next((c.after for c in review.changes if c.path == "title"), "")
        text = f"{review.verb} {title} {review.notes[0]}".strip()
        return shorten(text, SUMMARY_LIMIT)
    head = review.verb
    if review.target is not None:
        head = f"{head} {review.target.title}"
    for source, kind, target in review.links:
        head = f"{head} {source.title} —{kind}→ {target.title}"
    if review.notes and review.target is None and not review.links:
        head = f"{head} {review.notes[0]}"
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
    return shorten(f"{head}: {', '.join(parts)}" if parts else head, SUMMARY_LIMIT)
