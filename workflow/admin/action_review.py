"""A prepared action laid out for a person to judge: what it would change, on what, and why.

Everything the page names is fetched in one Lookup (two queries), so a 100-row import costs
what a single update costs. A write still awaiting a decision is compared with its records as
they are now, which is what approving would overwrite; an applied one shows what it did, from
its own audit events.

Other open writes on the same records are named beside it: approving one can make another
stale, and two updates of one field overwrite each other in the order a person approves them.
One query finds them (the same test the record page's pending panel uses), one Lookup names them.

An import has its own part of the page (import_view, its kind's `review_view`): each row with
its duplicate review, the decision taken on it and, once applied, what it became; and its links.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q
from django.urls import reverse
from django.utils.module_loading import import_string

from records.admin.timeline import clarifications, readable_kind, show, state_changes
from records.models import AuditEvent
from workflow import imports
from workflow.action_kinds import KINDS, kind_of
from workflow.admin.changes import (
    Lookup,
    Ref,
    headline,
    ids_named,
    one_line,
    review_operation,
    state_badge,
)
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket
from workflow.operations import operation_named, operation_names

APPLIED_LIMIT = 200
OVERLAP_LIMIT = 20
NAMED_LIMIT = 50  # records of one write looked for in others; an import may name hundreds
NAMING_KEYS = ("record_id", "source_id", "target_id")


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


def _evidence(entry: dict[str, Any], lookup: Lookup) -> dict[str, Any]:
    """One cited review: what the agent asked, where, and what it was answered."""
    asked = entry.get("request") or {}
    discovery = entry.get("kind") == ReviewTicket.DISCOVERY
    ref = lookup.collection_ref if discovery else lookup.record_ref
    selected = entry.get("selected_record_id")
    return {
        "kind": "looked for a collection" if discovery else "looked up a record by name",
        "asked": str(asked.get("query") or asked.get("name") or ""),
        "within": lookup.collection_ref(asked["collection_id"])
        if asked.get("collection_id")
        else None,
        "status": str(entry.get("status") or ""),
        "selected": lookup.record_ref(selected) if selected else None,
        "candidates": [ref(c) for c in entry.get("candidate_ids") or []],
        "created_at": str(entry.get("created_at", "")),
        "answered": clarifications([entry]),  # the user's, in the client
    }


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


def _applied(event: AuditEvent, lookup: Lookup) -> dict[str, Any]:
    """One event of an applied write: a record's field changes, or a link made or removed."""
    done: dict[str, Any] = {"headline": readable_kind(event.kind)}
    if event.entity_type != "relationship":
        done["record"] = lookup.record_ref(event.record_id)
        done["changes"] = state_changes(event.before, event.after)
        return done
    state = event.after if isinstance(event.after, dict) else event.before
    state = state if isinstance(state, dict) else {}
    source, target = (lookup.record_ref(state.get(k)) for k in ("source_id", "target_id"))
    done["link"] = (source, str(state.get("relationship_type", "")), target)
    return done


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


def action_review(action: PreparedAction) -> dict[str, Any]:
    kind = kind_of(action.operation)
    records, collections = _ids_named(action)
    events = _applied_events(action)
    records |= _ids_made(events)
    lookup = Lookup.load(action.workspace_id, records, collections)
    items: list[dict[str, Any]] = [
        {
            "review": review_operation(w.operation, w.arguments, lookup),
            "index": w.index,
            "decision_reason": w.reason,
            "clarifications": clarifications([], w.clarification),
        }
        for w in kind.writes(action)
    ]
    lines = [
        one_line(item["review"], against_current=action.state in OPEN_STATES) for item in items
    ]
    summary = lines[0] if len(lines) == 1 else f"{len(lines)} writes: " + "; ".join(lines)
    import_view = import_string(kind.review_view)(action, lookup) if kind.review_view else None
    return {
        "summary": import_view["summary"] if import_view else summary,
        "items": items,
        "import_view": import_view,  # its kind's own part (an import's rows)
        "evidence": [_evidence(entry, lookup) for entry in action.evidence or []],
        "compared_with_now": action.state != ActionState.COMMITTED,
        # Other open writes on its records.
        "overlaps": overlapping(action, touched(action, lookup), lookup),
        "clarifications": clarifications(action.evidence, action.clarification),
        "applied": [_applied(e, lookup) for e in events],  # none while it waits, nor for an import
    }


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


def _row(
    row: dict[str, Any],
    decision: dict[str, Any],
    outcome: dict[str, Any],
    data: Any,
    lookup: Lookup,
) -> dict[str, Any]:
    """One reviewed row: its duplicate review, the decision taken on it, what it became."""
    label = DECISION_LABELS.get(decision.get("decision", ""), "")
    if decision.get("record_id"):
        label = f"{label}: {lookup.title(decision['record_id'])}"
    flagged = row.get("status") != imports.CLEAN
    return {
        "key": str(row["key"]),
        "title": str(row["title"]),
        "flag": FLAG_LABELS.get(row.get("status", ""), str(row.get("status", ""))),
        "flagged": flagged,
        "data": show(data or {}, ROW_DATA_LIMIT),
        "candidates": [
            (lookup.record_ref(c["record_id"]), c.get("score"), "; ".join(c.get("reasons", [])))
            for c in row.get("candidates", [])
        ],
        "decision": label or ("decided when the agent commits" if flagged else "create"),
        "duplicate_of": str(row.get("duplicate_of") or ""),
        "made": lookup.record_ref(outcome["record_id"]) if outcome.get("record_id") else None,
        "outcome": OUTCOME_LABELS.get(str(outcome.get("outcome", "")), ""),
        # The user's answer in the client for this row, and the agent's account of why a
        # flagged row is created anyway.
        "clarifications": clarifications([decision], str(decision.get("clarification") or "")),
    }


def import_view(action: PreparedAction, lookup: Lookup) -> dict[str, Any]:
    arguments = action.arguments
    decisions = arguments.get("decisions") or {}
    data_by_key = {row["key"]: row.get("data") for row in arguments.get("rows") or []}
    titles = {str(row["key"]): str(row.get("title", "")) for row in arguments.get("rows") or []}
    result = action.result if isinstance(action.result, dict) else {}
    # Each row's outcome by key, once the import was applied (else empty).
    outcomes = result["rows"] if isinstance(result.get("rows"), dict) else {}
    made = {k: str(o["record_id"]) for k, o in outcomes.items() if o.get("record_id")}
    rows = [
        _row(
            row,
            decisions.get(row["key"]) or {},
            outcomes.get(row["key"]) or {},
            data_by_key.get(row["key"]),
            lookup,
        )
        for row in arguments.get("reviewed") or []
    ]
    dropped = {d.get("link_index"): d.get("reason", "") for d in result.get("dropped_links") or []}
    links = [
        {
            "source": _row_end(link.get("source", {}), titles, made, lookup),
            "relationship_type": str(link.get("relationship_type", "")),
            "target": _row_end(link.get("target", {}), titles, made, lookup),
            "note": f"not made: {dropped[index]}" if index in dropped else "",
        }
        for index, link in enumerate(arguments.get("links") or [])
    ]
    collection = lookup.collection_ref(arguments.get("collection_id"))
    flagged = sum(r["flagged"] for r in rows)
    summary = kind_of(action.operation).summary(len(arguments.get("rows") or []), collection.title)
    return {
        "collection": collection,
        "rows": rows,
        "links": links,
        "flagged": flagged,
        "decided": arguments.get("decisions") is not None,
        "applied": bool(outcomes),
        "summary": summary + (f", {flagged} flagged" if flagged else ""),
    }
