"""A prepared action laid out for a person to judge: what it would change, on what, and why.

Everything the page names is fetched in one Lookup (two queries), so a 100-row import costs
what a single update costs. A write still awaiting a decision is compared with its records as
they are now, which is what approving would overwrite; an applied one shows what it did, from
its own audit events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.admin.timeline import state_changes
from records.models import AuditEvent
from workflow import imports
from workflow.actions import BATCH
from workflow.admin.changes import (
    FieldChange,
    OperationReview,
    ids_named,
    one_line,
    review_operation,
    show,
)
from workflow.admin.lookup import Lookup, Ref
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket

FLAG_LABELS = {
    imports.CLEAN: "new",
    imports.POSSIBLE_DUPLICATE: "possible duplicate of an existing record",
    imports.BATCH_DUPLICATE: "same name as an earlier row",
}
DECISION_LABELS = {
    imports.SKIP: "skip (not imported)",
    imports.USE_EXISTING: "use the existing record",
    imports.CREATE_ANYWAY: "create anyway",
}
ROW_DATA_LIMIT = 160


@dataclass
class ItemView:
    review: OperationReview
    index: int | None = None
    decision_reason: str = ""
    clarification: str = ""


@dataclass
class Candidate:
    ref: Ref
    score: Any
    reasons: str


@dataclass
class ImportRowView:
    key: str
    title: str
    flag: str
    flagged: bool
    data: str
    candidates: list[Candidate]
    decision: str
    duplicate_of: str


@dataclass
class ImportView:
    collection: Ref
    rows: list[ImportRowView]
    links: list[tuple[str, str, str]]
    flagged: int
    decided: bool


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


@dataclass
class AppliedView:
    record: Ref
    headline: str
    changes: list[FieldChange]


@dataclass
class ActionReview:
    summary: str
    items: list[ItemView] = field(default_factory=list)
    import_view: ImportView | None = None
    evidence: list[EvidenceView] = field(default_factory=list)
    applied: list[AppliedView] = field(default_factory=list)
    compared_with_now: bool = True


def _operations(action: PreparedAction) -> list[tuple[int | None, str, dict[str, Any], str, str]]:
    """(index, operation, arguments, reason, clarification) of each single write in it."""
    if action.operation == BATCH:
        return [
            (i["index"], i["operation"], i["arguments"], i["decision_reason"], i["clarification"])
            for i in action.arguments.get("items", [])
        ]
    if action.operation == imports.OPERATION:
        return []
    return [(None, action.operation, action.arguments, "", "")]


def _ids_named(action: PreparedAction) -> tuple[set[str], set[str]]:
    records: set[str] = set()
    collections: set[str] = set(action.collection_ids or [])
    named_records, named_collections = ids_named(
        (operation, args) for _, operation, args, _, _ in _operations(action)
    )
    records |= named_records
    collections |= named_collections
    arguments = action.arguments if isinstance(action.arguments, dict) else {}
    if action.operation == imports.OPERATION:
        collections.add(str(arguments.get("collection_id", "")))
        for row in arguments.get("reviewed") or []:
            records.update(c["record_id"] for c in row.get("candidates", []))
        for decision in (arguments.get("decisions") or {}).values():
            if decision.get("record_id"):
                records.add(str(decision["record_id"]))
        for link in arguments.get("links") or []:
            for end in (link.get("source", {}), link.get("target", {})):
                if "record_id" in end:
                    records.add(str(end["record_id"]))
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
            )
        )
    return views


def _end_label(end: dict[str, Any], lookup: Lookup) -> str:
    return f"row {end['key']}" if "key" in end else lookup.title(end.get("record_id"))


def _import_view(action: PreparedAction, lookup: Lookup) -> ImportView:
    arguments = action.arguments
    decisions = arguments.get("decisions") or {}
    data_by_key = {row["key"]: row.get("data") for row in arguments.get("rows") or []}
    rows = []
    for row in arguments.get("reviewed") or []:
        decision = decisions.get(row["key"]) or {}
        label = DECISION_LABELS.get(decision.get("decision", ""), "")
        if decision.get("record_id"):
            label = f"{label}: {lookup.title(decision['record_id'])}"
        flagged = row.get("status") != imports.CLEAN
        rows.append(
            ImportRowView(
                key=str(row["key"]),
                title=str(row["title"]),
                flag=FLAG_LABELS.get(row.get("status", ""), str(row.get("status", ""))),
                flagged=flagged,
                data=show(data_by_key.get(row["key"]) or {}, ROW_DATA_LIMIT),
                candidates=[
                    Candidate(
                        lookup.record_ref(c["record_id"]),
                        c.get("score"),
                        "; ".join(c.get("reasons", [])),
                    )
                    for c in row.get("candidates", [])
                ],
                decision=label or ("decided when the agent commits" if flagged else "create"),
                duplicate_of=str(row.get("duplicate_of") or ""),
            )
        )
    links = [
        (
            _end_label(link.get("source", {}), lookup),
            str(link.get("relationship_type", "")),
            _end_label(link.get("target", {}), lookup),
        )
        for link in arguments.get("links") or []
    ]
    return ImportView(
        collection=lookup.collection_ref(arguments.get("collection_id")),
        rows=rows,
        links=links,
        flagged=sum(r.flagged for r in rows),
        decided=arguments.get("decisions") is not None,
    )


def _applied(action: PreparedAction, lookup: Lookup) -> list[AppliedView]:
    events = AuditEvent.objects.filter(
        workspace_id=action.workspace_id, action_id=action.pk, entity_type="record"
    ).order_by("created_at", "id")[:200]
    return [
        AppliedView(
            record=lookup.record_ref(event.record_id),
            headline=event.kind.split(".", 1)[-1].replace("_", " "),
            changes=[
                FieldChange(c.name, c.change, c.before, c.after)
                for c in state_changes(event.before, event.after)
            ],
        )
        for event in events
    ]


def import_summary(action: PreparedAction, collection_title: str) -> str:
    rows = action.arguments.get("rows") or []
    flagged = sum(r.get("status") != imports.CLEAN for r in action.arguments.get("reviewed") or [])
    note = f", {flagged} flagged" if flagged else ""
    return f"import {len(rows)} row{'s' if len(rows) != 1 else ''} into {collection_title}{note}"


def action_review(action: PreparedAction) -> ActionReview:
    records, collections = _ids_named(action)
    lookup = Lookup.load(action.workspace_id, records, collections)
    pending = action.state in OPEN_STATES
    review = ActionReview(summary="", compared_with_now=action.state != ActionState.COMMITTED)
    for index, operation, args, reason, said in _operations(action):
        review.items.append(
            ItemView(review_operation(operation, args, lookup), index, reason, said)
        )
    if action.operation == imports.OPERATION:
        review.import_view = _import_view(action, lookup)
        review.summary = import_summary(action, review.import_view.collection.title)
    else:
        lines = [one_line(item.review, against_current=pending) for item in review.items]
        review.summary = (
            lines[0] if len(lines) == 1 else f"{len(lines)} writes: " + "; ".join(lines)
        )
    review.evidence = _evidence(action, lookup)
    if action.state == ActionState.COMMITTED:
        review.applied = _applied(action, lookup)
    return review
