"""A prepared action laid out for a person to judge: what it would change, on what, and why.

Everything the page names is fetched in one Lookup (two queries), so a 100-row import costs
what a single update costs. A write still awaiting a decision is compared with its records as
they are now, which is what approving would overwrite; an applied one shows what it did, from
its own audit events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.module_loading import import_string

from records.admin.clarifications import Clarification, clarifications
from records.admin.timeline import readable_kind, state_changes
from records.models import AuditEvent
from workflow.action_kinds import kind_of
from workflow.admin.changes import (
    FieldChange,
    OperationReview,
    ids_named,
    one_line,
    review_operation,
)
from workflow.admin.lookup import Lookup, Ref
from workflow.admin.overlaps import Overlap, overlapping, touched
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket

APPLIED_LIMIT = 200


@dataclass
class ItemView:
    review: OperationReview
    index: int | None = None
    decision_reason: str = ""
    clarifications: list[Clarification] = field(default_factory=list)


@dataclass
class EvidenceView:
    review_id: str
    kind: str
    asked: str
    within: Ref | None
    status: str
    selected: Ref | None
    candidates: list[Ref]
    created_at: str
    answered: list[Clarification] = field(default_factory=list)  # the user's, in the client


@dataclass
class AppliedView:
    record: Ref
    headline: str
    changes: list[FieldChange]
    link: tuple[Ref, str, Ref] | None = None  # a link made or removed


@dataclass
class ActionReview:
    summary: str
    items: list[ItemView] = field(default_factory=list)
    import_view: Any = None  # its kind's own part (an import's rows)
    evidence: list[EvidenceView] = field(default_factory=list)
    applied: list[AppliedView] = field(default_factory=list)
    compared_with_now: bool = True
    overlaps: list[Overlap] = field(default_factory=list)  # other open writes on its records
    clarifications: list[Clarification] = field(default_factory=list)


def _ids_named(action: PreparedAction) -> tuple[set[str], set[str]]:
    kind = kind_of(action.operation)
    records, collections = ids_named((w.operation, w.arguments) for w in kind.writes(action))
    own_records, own_collections = kind.shown_ids(action)
    records |= own_records
    collections |= own_collections | set(action.collection_ids or [])
    for entry in action.evidence or []:
        if entry.get("selected_record_id"):
            records.add(str(entry["selected_record_id"]))
        target = collections if entry.get("kind") == ReviewTicket.DISCOVERY else records
        target.update(str(c) for c in entry.get("candidate_ids") or [])
        asked = entry.get("request") or {}
        if asked.get("collection_id"):
            collections.add(str(asked["collection_id"]))
    return records, collections


def _evidence(action: PreparedAction, lookup: Lookup) -> list[EvidenceView]:
    views = []
    for entry in action.evidence or []:
        asked = entry.get("request") or {}
        discovery = entry.get("kind") == ReviewTicket.DISCOVERY
        candidates = [
            lookup.collection_ref(c) if discovery else lookup.record_ref(c)
            for c in entry.get("candidate_ids") or []
        ]
        selected = entry.get("selected_record_id")
        views.append(
            EvidenceView(
                review_id=str(entry.get("review_id", "")),
                kind="looked for a collection" if discovery else "looked up a record by name",
                asked=str(asked.get("query") or asked.get("name") or ""),
                within=lookup.collection_ref(asked["collection_id"])
                if asked.get("collection_id")
                else None,
                status=str(entry.get("status") or ""),
                selected=lookup.record_ref(selected) if selected else None,
                candidates=candidates,
                created_at=str(entry.get("created_at", "")),
                answered=clarifications([entry]),
            )
        )
    return views


def _applied_events(action: PreparedAction) -> list[AuditEvent]:
    """What an applied write did, from its own audit events (records it made or changed, links
    it made or removed); empty while it awaits a decision."""
    if action.state != ActionState.COMMITTED or not kind_of(action.operation).shows_events:
        return []
    return list(
        AuditEvent.objects.filter(
            workspace_id=action.workspace_id,
            action_id=action.pk,
            entity_type__in=("record", "relationship"),
        ).order_by("created_at", "id")[:APPLIED_LIMIT]
    )


def _ids_made(events: list[AuditEvent]) -> set[str]:
    """Records an applied write made or touched: they did not exist when it was prepared, so
    its arguments do not name them; its events do."""
    ids = {e.record_id for e in events if e.record_id}
    for event in events:
        state = event.after if isinstance(event.after, dict) else event.before
        if event.entity_type == "relationship" and isinstance(state, dict):
            ids.update(str(state[k]) for k in ("source_id", "target_id") if state.get(k))
    return ids


def _applied(events: list[AuditEvent], lookup: Lookup) -> list[AppliedView]:
    views = []
    for event in events:
        state = event.after if isinstance(event.after, dict) else event.before
        if event.entity_type == "relationship":
            state = state if isinstance(state, dict) else {}
            link = (
                lookup.record_ref(state.get("source_id")),
                str(state.get("relationship_type", "")),
                lookup.record_ref(state.get("target_id")),
            )
            views.append(AppliedView(link[0], readable_kind(event.kind), [], link))
            continue
        views.append(
            AppliedView(
                record=lookup.record_ref(event.record_id),
                headline=readable_kind(event.kind),
                changes=[
                    FieldChange(c.name, c.change, c.before, c.after)
                    for c in state_changes(event.before, event.after)
                ],
            )
        )
    return views


def action_review(action: PreparedAction) -> ActionReview:
    kind = kind_of(action.operation)
    records, collections = _ids_named(action)
    events = _applied_events(action)
    records |= _ids_made(events)
    lookup = Lookup.load(action.workspace_id, records, collections)
    pending = action.state in OPEN_STATES
    review = ActionReview(summary="", compared_with_now=action.state != ActionState.COMMITTED)
    for w in kind.writes(action):
        review.items.append(
            ItemView(
                review_operation(w.operation, w.arguments, lookup),
                w.index,
                w.reason,
                clarifications([], w.clarification),
            )
        )
    lines = [one_line(item.review, against_current=pending) for item in review.items]
    review.summary = lines[0] if len(lines) == 1 else f"{len(lines)} writes: " + "; ".join(lines)
    if kind.review_view:
        review.import_view = import_string(kind.review_view)(action, lookup)
        review.summary = review.import_view.summary
    review.evidence = _evidence(action, lookup)
    review.clarifications = clarifications(action.evidence, action.clarification)
    review.overlaps = overlapping(action, touched(action, lookup), lookup)
    review.applied = _applied(events, lookup)  # none while it waits, nor for an import
    return review
