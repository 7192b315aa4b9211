"""What an operation would change, as plain data: fields before and after, links made or removed.

Each operation's definition says this for its arguments, against the records as they are now;
the admin turns it into a review page and a one-line summary without knowing any operation by
name. Values stay JSON as they are (the reader shortens them); an ID stays an ID (the reader
finds its title).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from records.models import Record
from records.validation import canonical_json

FieldKind = Literal["added", "changed", "removed", "unchanged"]
_MISSING = object()


@dataclass(frozen=True)
class FieldChange:
    """One field's effect. `before` means nothing when added, `after` nothing when removed."""

    path: str  # "stage", "address.city", "title", "alias"
    kind: FieldKind
    before: Any = None
    after: Any = None


@dataclass(frozen=True)
class LinkChange:
    """A link made or removed: by its ends and type, or (a removal) by the relationship's ID."""

    made: bool
    source_id: Any = None
    relationship_type: Any = None
    target_id: Any = None
    relationship_id: Any = None


@dataclass(frozen=True)
class Change:
    """One operation's effect, as a reviewer needs it.

    record_id / collection_id: the existing record or collection it changes; created_in: the
    collection a new record would go into. notes: plain sentences worth saying beside it.
    """

    verb: str  # "update", "link", "create collection"
    record_id: Any = None
    collection_id: Any = None
    created_in: Any = None
    fields: tuple[FieldChange, ...] = ()
    links: tuple[LinkChange, ...] = ()
    notes: tuple[str, ...] = ()


class CurrentRecords(Protocol):
    """The records an operation's arguments name, as they are now (loaded by the caller, in
    bulk, so a page of a hundred writes costs the queries of one)."""

    def record(self, record_id: Any) -> Record | None: ...


def nested_changes(before: Any, after: Any, path: str = "") -> tuple[FieldChange, ...]:
    """Leaf-level differences between two JSON values; objects are walked key by key, so a
    reviewer sees `address.city: Pune → Delhi` rather than two whole objects."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[FieldChange] = []
        for key in sorted(set(before) | set(after)):
            child = f"{path}.{key}" if path else str(key)
            found += nested_changes(before.get(key, _MISSING), after.get(key, _MISSING), child)
        return tuple(found)
    if before is _MISSING:
        return (FieldChange(path, "added", after=after),)
    if after is _MISSING:
        return (FieldChange(path, "removed", before=before),)
    if canonical_json(before) == canonical_json(after):
        return ()
    return (FieldChange(path, "changed", before, after),)


def added_fields(values: dict[str, Any]) -> tuple[FieldChange, ...]:
    """Every leaf of `values`, as added."""
    return nested_changes({}, values)


def merged_fields(current: dict[str, Any], changes: dict[str, Any]) -> tuple[FieldChange, ...]:
    """A shallow merge's effect: each named key replaces the current value (nested walked); a
    key named with its current value is shown as unchanged rather than left out."""
    found: list[FieldChange] = []
    for key in sorted(changes):
        before = current.get(key, _MISSING)
        diff = nested_changes(before, changes[key], key)
        found += diff or (FieldChange(key, "unchanged", before, changes[key]),)
    return tuple(found)
