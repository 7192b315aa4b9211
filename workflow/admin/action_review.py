"""A prepared action laid out for a person to judge: what it would change, on what, and why.

Everything the page names is fetched in one Lookup (two queries), so a 100-row import costs
what a single update costs. A write still awaiting a decision is compared with its records as
they are now, which is what approving would overwrite; an applied one shows what it did, from
its own audit events.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from records.admin.timeline import clarifications, readable_kind, state_changes
from records.models import AuditEvent
from workflow.action_kinds import kind_of
from workflow.admin.changes import Lookup, ids_named, one_line, review_operation
from workflow.admin.overlaps import overlapping, touched
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket

APPLIED_LIMIT = 200


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
