"""Other pending writes that touch what this one touches: the same record, or the same field.

Two held writes on one record interact: approving one can make the other stale, and two updates
of the same field overwrite each other in the order a person approves them. The review page
names them beside each other so the reviewer decides both knowing it. One query finds the
candidates (the same test the record page's pending panel uses), one Lookup names them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.urls import reverse

from workflow import imports
from workflow.actions import BATCH
from workflow.admin.changes import ids_named, one_line, review_operation
from workflow.admin.lookup import Lookup
from workflow.admin.states import state_badge
from workflow.models import OPEN_STATES, PreparedAction
from workflow.operations import operation_named, operation_names

OVERLAP_LIMIT = 20
NAMED_LIMIT = 50  # records of one write looked for in others; an import may name hundreds
NAMING_KEYS = ("record_id", "source_id", "target_id")


@dataclass
class Overlap:
    url: str
    summary: str
    badge: str
    shared: list[str]  # "Kirat: stage", or "Kirat" when only the record is shared
    same_field: bool


def names_any(record_ids: Iterable[str]) -> Q:
    """Actions whose arguments name one of these records (a batch or an import anywhere in its
    arguments, a single write by its record keys)."""
    names = Q(pk__in=[])
    for record_id in record_ids:
        names |= Q(operation__in=[BATCH, imports.OPERATION], arguments__icontains=record_id)
        for key in NAMING_KEYS:
            names |= Q(**{f"arguments__{key}": record_id})
    return names


def _single_writes(action: PreparedAction) -> list[tuple[str, dict[str, Any]]]:
    arguments = action.arguments if isinstance(action.arguments, dict) else {}
    if action.operation == BATCH:
        return [(i["operation"], i["arguments"]) for i in arguments.get("items", [])]
    if action.operation == imports.OPERATION:
        return []
    return [(action.operation, arguments)]


def touched(action: PreparedAction, lookup: Lookup) -> dict[str, set[str]]:
    """The existing records a write changes or links, each with the fields it changes."""
    touches: dict[str, set[str]] = {}
    known = operation_names()
    for operation, args in _single_writes(action):
        if operation not in known:
            continue
        definition = operation_named(operation)
        for record_id in definition.named_ids(args)[0]:
            touches.setdefault(record_id, set())
        change = definition.change(args, lookup)
        if change.record_id:
            touches.setdefault(str(change.record_id), set()).update(c.path for c in change.fields)
    if action.operation == imports.OPERATION:
        arguments = action.arguments
        for decision in (arguments.get("decisions") or {}).values():
            if decision.get("record_id"):
                touches.setdefault(str(decision["record_id"]), set())
        for link in arguments.get("links") or []:
            for end in (link.get("source", {}), link.get("target", {})):
                if end.get("record_id"):
                    touches.setdefault(str(end["record_id"]), set())
    return touches


def _named(action: PreparedAction) -> set[str]:
    records = ids_named(_single_writes(action))[0]
    if action.operation == imports.OPERATION:
        for link in action.arguments.get("links") or []:
            for end in (link.get("source", {}), link.get("target", {})):
                if end.get("record_id"):
                    records.add(str(end["record_id"]))
        for decision in (action.arguments.get("decisions") or {}).values():
            if decision.get("record_id"):
                records.add(str(decision["record_id"]))
    return records


def _summary(action: PreparedAction, lookup: Lookup) -> str:
    if action.operation == imports.OPERATION:
        rows = len(action.arguments.get("rows") or [])
        return f"import {rows} row{'s' if rows != 1 else ''}"
    writes = _single_writes(action)
    if not writes:
        return action.operation.replace("_", " ")
    line = one_line(review_operation(*writes[0], lookup))
    return f"{len(writes)} writes: {line}; …" if len(writes) > 1 else line


def overlapping(action: PreparedAction, mine: dict[str, set[str]], lookup: Lookup) -> list[Overlap]:
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
    lookup = Lookup.load(action.workspace_id, wanted)
    overlaps = []
    for other in others:
        theirs = touched(other, lookup)
        shared_records = sorted(set(mine) & set(theirs), key=lookup.title)
        if not shared_records:
            continue  # named the ID only in passing (a cited candidate, a reason's text)
        shared, same_field = [], False
        for record_id in shared_records:
            fields = sorted(mine[record_id] & theirs[record_id])
            same_field = same_field or bool(fields)
            title = lookup.title(record_id)
            shared.append(f"{title}: {', '.join(fields)}" if fields else title)
        overlaps.append(
            Overlap(
                url=reverse("admin:workflow_preparedaction_change", args=[other.pk]),
                summary=_summary(other, lookup),
                badge=state_badge(other.state),
                shared=shared,
                same_field=same_field,
            )
        )
    return overlaps
