"""A prepared action laid out for a person to judge: what it would change, on what, and why.

Everything the page names is fetched in one Lookup (two queries), so a 100-row import costs
what a single update costs. A write still awaiting a decision is compared with its records as
they are now, which is what approving would overwrite; an applied one shows what it did, from
its own audit events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.admin.clarifications import Clarification, clarifications
from records.admin.timeline import readable_kind, state_changes
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
from workflow.admin.overlaps import Overlap, overlapping, touched
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
OUTCOME_LABELS = {
    "created": "created",
    "used_existing": "used the existing record",
    "skipped": "skipped",
}
ROW_DATA_LIMIT = 160
APPLIED_LIMIT = 200


@dataclass
class ItemView:
    review: OperationReview
    index: int | None = None
    decision_reason: str = ""
    clarifications: list[Clarification] = field(default_factory=list)


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
    made: Ref | None = None  # the record the row became, once applied
    outcome: str = ""  # "created", "used the existing record", "skipped"
    # The user's answer in the client for this row, and the agent's account of why a flagged
    # row is created anyway.
    clarifications: list[Clarification] = field(default_factory=list)


@dataclass
class ImportLinkView:
    source: Ref
    relationship_type: str
    target: Ref
    note: str = ""  # "not made: an endpoint row was skipped"


@dataclass
class ImportView:
    collection: Ref
    rows: list[ImportRowView]
    links: list[ImportLinkView]
    flagged: int
    decided: bool
    applied: bool = False


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
    import_view: ImportView | None = None
    evidence: list[EvidenceView] = field(default_factory=list)
    applied: list[AppliedView] = field(default_factory=list)
    compared_with_now: bool = True
    overlaps: list[Overlap] = field(default_factory=list)  # other open writes on its records
    clarifications: list[Clarification] = field(default_factory=list)


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
                answered=clarifications([entry]),
            )
        )
    return views


def _outcomes(action: PreparedAction) -> dict[str, dict[str, Any]]:
    """Each import row's outcome by key, once the import was applied (else empty)."""
    result = action.result if isinstance(action.result, dict) else {}
    rows = result.get("rows")
    return rows if isinstance(rows, dict) else {}


def _row_end(
    end: dict[str, Any], titles: dict[str, str], made: dict[str, str], lookup: Lookup
) -> Ref:
    """A link end as the reviewer reads it: an existing record, or a row by its title (linked
    to the record it became once applied)."""
    if "row" not in end:
        return lookup.record_ref(end.get("record_id"))
    key = str(end["row"])
    if key in made:
        ref = lookup.record_ref(made[key])
        return Ref(ref.id, ref.title, ref.url, f"row {key}")
    return Ref("", titles.get(key, key), "", f"row {key}")


def _import_view(action: PreparedAction, lookup: Lookup) -> ImportView:
    arguments = action.arguments
    decisions = arguments.get("decisions") or {}
    data_by_key = {row["key"]: row.get("data") for row in arguments.get("rows") or []}
    titles = {str(row["key"]): str(row.get("title", "")) for row in arguments.get("rows") or []}
    outcomes = _outcomes(action)
    made = {k: str(o["record_id"]) for k, o in outcomes.items() if o.get("record_id")}
    rows = []
    for row in arguments.get("reviewed") or []:
        decision = decisions.get(row["key"]) or {}
        outcome = outcomes.get(row["key"]) or {}
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
                made=lookup.record_ref(outcome["record_id"]) if outcome.get("record_id") else None,
                outcome=OUTCOME_LABELS.get(str(outcome.get("outcome", "")), ""),
                clarifications=clarifications([decision], str(decision.get("clarification") or "")),
            )
        )
    result = action.result if isinstance(action.result, dict) else {}
    dropped = {d.get("link_index"): d.get("reason", "") for d in result.get("dropped_links") or []}
    links = [
        ImportLinkView(
            _row_end(link.get("source", {}), titles, made, lookup),
            str(link.get("relationship_type", "")),
            _row_end(link.get("target", {}), titles, made, lookup),
            f"not made: {dropped[index]}" if index in dropped else "",
        )
        for index, link in enumerate(arguments.get("links") or [])
    ]
    return ImportView(
        collection=lookup.collection_ref(arguments.get("collection_id")),
        rows=rows,
        links=links,
        flagged=sum(r.flagged for r in rows),
        decided=arguments.get("decisions") is not None,
        applied=bool(outcomes),
    )


def _applied_events(action: PreparedAction) -> list[AuditEvent]:
    """What an applied write did, from its own audit events (records it made or changed, links
    it made or removed); empty while it awaits a decision."""
    if action.state != ActionState.COMMITTED or action.operation == imports.OPERATION:
        return []  # an import's stored outcome names what each row became
    return list(
        AuditEvent.objects.filter(
            workspace_id=action.workspace_id,
            action_id=action.pk,
            entity_type__in=("record", "relationship"),
        ).order_by("created_at", "id")[:APPLIED_LIMIT]
    )


def _ids_made(action: PreparedAction, events: list[AuditEvent]) -> set[str]:
    """Records an applied write made or touched: they did not exist when it was prepared, so
    its arguments do not name them; its events and stored outcome do."""
    ids = {e.record_id for e in events if e.record_id}
    for event in events:
        state = event.after if isinstance(event.after, dict) else event.before
        if event.entity_type == "relationship" and isinstance(state, dict):
            ids.update(str(state[k]) for k in ("source_id", "target_id") if state.get(k))
    ids.update(str(o["record_id"]) for o in _outcomes(action).values() if o.get("record_id"))
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


def import_summary(action: PreparedAction, collection_title: str) -> str:
    rows = action.arguments.get("rows") or []
    flagged = sum(r.get("status") != imports.CLEAN for r in action.arguments.get("reviewed") or [])
    note = f", {flagged} flagged" if flagged else ""
    return f"import {len(rows)} row{'s' if len(rows) != 1 else ''} into {collection_title}{note}"


def action_review(action: PreparedAction) -> ActionReview:
    records, collections = _ids_named(action)
    events = _applied_events(action)
    records |= _ids_made(action, events)
    lookup = Lookup.load(action.workspace_id, records, collections)
    pending = action.state in OPEN_STATES
    review = ActionReview(summary="", compared_with_now=action.state != ActionState.COMMITTED)
    for index, operation, args, reason, said in _operations(action):
        review.items.append(
            ItemView(
                review_operation(operation, args, lookup), index, reason, clarifications([], said)
            )
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
    review.clarifications = clarifications(action.evidence, action.clarification)
    review.overlaps = overlapping(action, touched(action, lookup), lookup)
    if action.state == ActionState.COMMITTED and review.import_view is None:
        # An import's rows table names the record each row became; one line per row and link
        # again below it would only repeat it.
        review.applied = _applied(events, lookup)
    return review
