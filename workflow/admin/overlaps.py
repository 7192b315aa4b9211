"""Other pending writes that touch what this one touches: the same record, or the same field.

Two held writes on one record interact: approving one can make the other stale, and two updates
of the same field overwrite each other in the order a person approves them. The review page
names them beside each other so the reviewer decides both knowing it. One query finds the
candidates (the same test the record page's pending panel uses), one Lookup names them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q
from django.urls import reverse

from workflow.action_kinds import KINDS, kind_of
from workflow.admin.changes import Lookup, ids_named
from workflow.admin.queue import headline, state_badge
from workflow.models import OPEN_STATES, PreparedAction
from workflow.operations import operation_named, operation_names

OVERLAP_LIMIT = 20
NAMED_LIMIT = 50  # records of one write looked for in others; an import may name hundreds
NAMING_KEYS = ("record_id", "source_id", "target_id")


def names_any(record_ids: Iterable[str]) -> Q:
    """Actions whose arguments name one of these records (a single write by its record keys,
    an action of another kind anywhere in its arguments)."""
    names = Q(pk__in=[])
    for record_id in record_ids:
        names |= Q(operation__in=list(KINDS), arguments__icontains=record_id)
        for key in NAMING_KEYS:
            names |= Q(**{f"arguments__{key}": record_id})
    return names


def touched(action: PreparedAction, lookup: Lookup) -> dict[str, set[str]]:
    """The existing records a write changes or links, each with the fields it changes."""
    touches: dict[str, set[str]] = {}
    known = operation_names()
    kind = kind_of(action.operation)
    for write in kind.writes(action):
        if write.operation not in known:
            continue
        definition = operation_named(write.operation)
        for record_id in definition.named_ids(write.arguments)[0]:
            touches.setdefault(record_id, set())
        change = definition.change(write.arguments, lookup)
        if change.record_id:
            touches.setdefault(str(change.record_id), set()).update(c.path for c in change.fields)
    for record_id in kind.touches(action.arguments):
        touches.setdefault(record_id, set())
    return touches


def _named(action: PreparedAction) -> set[str]:
    kind = kind_of(action.operation)
    records = ids_named((w.operation, w.arguments) for w in kind.writes(action))[0]
    return records | kind.touches(action.arguments)


def _summary(action: PreparedAction, lookup: Lookup) -> str:
    kind = kind_of(action.operation)
    writes = kind.writes(action)
    where = lookup.collection_ref(kind.own_collection(action.arguments)).title
    first = writes[0] if writes else None
    return headline(kind, first, kind.size(action.arguments), where, lookup, True)


def overlapping(
    action: PreparedAction, mine: dict[str, set[str]], lookup: Lookup
) -> list[dict[str, Any]]:
    """Other writes still open in the workspace that touch a record this one touches."""
    if action.state not in OPEN_STATES or not mine:
        return []
    others = list(
        PreparedAction.objects.filter(workspace_id=action.workspace_id, state__in=OPEN_STATES)
        .exclude(pk=action.pk)
        .filter(names_any(sorted(mine)[:NAMED_LIMIT]))
        .order_by("-created_at")[:OVERLAP_LIMIT]
    )
    if not others:
        return []
    wanted = set(mine).union(*(_named(o) for o in others))
    own = (kind_of(o.operation).own_collection(o.arguments) for o in others)
    lookup = Lookup.load(action.workspace_id, wanted, [c for c in own if c])
    overlaps = []
    for other in others:
        theirs = touched(other, lookup)
        shared_records = sorted(set(mine) & set(theirs), key=lookup.title)
        if not shared_records:
            continue  # named the ID only in passing (a cited candidate, a reason's text)
        # Each shared record as "Kirat: stage", or "Kirat" when only the record is shared.
        shared, same_field = [], False
        for record_id in shared_records:
            fields = sorted(mine[record_id] & theirs[record_id])
            same_field = same_field or bool(fields)
            title = lookup.title(record_id)
            shared.append(f"{title}: {', '.join(fields)}" if fields else title)
        overlaps.append(
            {
                "url": reverse("admin:workflow_preparedaction_change", args=[other.pk]),
                "summary": _summary(other, lookup),
                "badge": state_badge(other.state),
                "shared": shared,
                "same_field": same_field,
            }
        )
    return overlaps
