"""A record's audit trail as a person reads it: who, when, what changed field by field, and why,
with agent-reported clarifications beside any verdict on them. Two queries however long."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from records.acting import by_person
from records.admin.clarifications import Clarification, clarifications
from records.models import AuditEvent, Record
from records.selectors import ClarificationVerdict, clarification_reviews_for
from records.validation import canonical_json

HEADLINES = {
    "record.created": "Created",
    "record.updated": "Data updated",
    "record.renamed": "Renamed",
    "record.archived": "Archived",
    "record.alias_added": "Alias added",
    "record.alias_removed": "Alias removed",
    "record.self_mapped": "Mapped as “me” for an actor",
    "relationship.created": "Linked",
    "relationship.deleted": "Link removed",
    "relationship.already_linked": "Linked again (the link already existed; nothing changed)",
    "record.self_unmapped": "“Me” mapping removed",
    "collection.created": "Collection created",
    "collection.reused": "Collection reused (one of that name already existed)",
    "collection.updated": "Collection updated",
    "collection.policy_changed": "Collection approval policy changed",
    "collection.alias_added": "Collection alias added",
    "collection.alias_removed": "Collection alias removed",
    "clarification.confirmed": "Clarification confirmed by a person",
    "clarification.disputed": "Clarification disputed by a person",
    # Written by the workflow when a person decides on an agent's held write.
    "action.approved": "Agent's write approved",
    "action.rejected": "Agent's write rejected",
}


def readable_kind(kind: str) -> str:
    return HEADLINES.get(kind, kind.replace(".", ": ").replace("_", " "))


VALUE_LIMIT = 160


@dataclass
class FieldChange:
    name: str
    change: str  # added | changed | removed
    before: str = ""
    after: str = ""


@dataclass
class TimelineEntry:
    event: AuditEvent
    headline: str
    by_person: bool
    changes: list[FieldChange] = field(default_factory=list)
    link: dict[str, str] | None = None
    verdict: ClarificationVerdict | None = None
    review_url: str = ""
    clarifications: list[Clarification] = field(default_factory=list)
    # The person who let an agent's write through, or turned it down.
    approved_by: str = ""
    rejected_by: str = ""


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def _diff_values(name: str, before: Any, after: Any) -> FieldChange | None:
    if canonical_json(before) == canonical_json(after):
        return None
    return FieldChange(name, "changed", _show(before), _show(after))


_MISSING = object()


def _by_path(path: str, before: Any, after: Any) -> list[FieldChange]:
    """Leaf by leaf, objects walked key by key, so history reads `data.address.city: Pune →
    Delhi` as the review page does rather than two whole objects."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[FieldChange] = []
        for key in sorted(set(before) | set(after)):
            found += _by_path(f"{path}.{key}", before.get(key, _MISSING), after.get(key, _MISSING))
        return found
    if before is _MISSING:
        return [FieldChange(path, "added", after=_show(after))]
    if after is _MISSING:
        return [FieldChange(path, "removed", before=_show(before))]
    change = _diff_values(path, before, after)
    return [change] if change else []


def state_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[FieldChange]:
    """Title, every data key, aliases and archival, compared between two record states."""
    before, after = before or {}, after or {}
    changes: list[FieldChange] = []
    if "title" in after or "title" in before:
        if not before:
            changes.append(FieldChange("title", "added", after=_show(after.get("title"))))
        elif change := _diff_values("title", before.get("title"), after.get("title")):
            changes.append(change)
    changes += _by_path("data", before.get("data") or {}, after.get("data") or {})
    old_aliases, new_aliases = set(before.get("aliases") or []), set(after.get("aliases") or [])
    changes += [FieldChange("alias", "added", after=a) for a in sorted(new_aliases - old_aliases)]
    changes += [
        FieldChange("alias", "removed", before=a) for a in sorted(old_aliases - new_aliases)
    ]
    if before and before.get("archived_at") != after.get("archived_at"):
        changes.append(
            FieldChange(
                "archived",
                "changed",
                _show(before.get("archived_at") or "no"),
                _show(after.get("archived_at") or "no"),
            )
        )
    return changes


def _top_level_changes(before: Any, after: Any) -> list[FieldChange]:
    """Key by key, for states other than a record's (a collection's, a link's, a decision's)."""
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    changes: list[FieldChange] = []
    for key in sorted(set(before) | set(after)):
        if key not in before:
            changes.append(FieldChange(key, "added", after=_show(after[key])))
        elif key not in after:
            changes.append(FieldChange(key, "removed", before=_show(before[key])))
        elif change := _diff_values(key, before[key], after[key]):
            changes.append(change)
    return changes


def event_changes(event: AuditEvent) -> list[FieldChange]:
    """What one event changed, field by field: a record's title, data, aliases and archival;
    any other state key by key."""
    if event.entity_type == "record":
        return state_changes(event.before, event.after)
    return _top_level_changes(event.before, event.after)


def _link_summary(event: AuditEvent) -> dict[str, str] | None:
    state = event.after if event.kind == "relationship.created" else event.before
    if not isinstance(state, dict):
        return None
    target_id = str(state.get("target_id", ""))
    return {
        "relationship_type": str(state.get("relationship_type", "")),
        "target_title": str(state.get("target_title", target_id)),
        "target_url": reverse("admin:records_record_change", args=[target_id]) if target_id else "",
    }


def timeline_entry(event: AuditEvent) -> TimelineEntry:
    entry = TimelineEntry(
        event=event,
        headline=readable_kind(event.kind),
        by_person=by_person(event),
    )
    if event.kind == "action.approved":
        entry.approved_by = event.actor_id
    elif event.kind == "action.rejected":
        entry.rejected_by = event.actor_id
    else:
        entry.approved_by = next(
            (
                str(e["approved_by"])
                for e in event.review_evidence or []
                if isinstance(e, dict) and e.get("approved_by")
            ),
            "",
        )
    if event.entity_type == "record":
        entry.changes = state_changes(event.before, event.after)
    elif event.entity_type == "relationship":
        entry.link = _link_summary(event)
    if event.agent_reported_clarification.strip():
        entry.review_url = reverse("admin:records_auditevent_review", args=[event.pk])
    return entry


def record_timeline(record: Record, limit: int = 50) -> tuple[list[TimelineEntry], bool]:
    """The newest `limit` events about the record, newest first, and whether older ones exist."""
    events = list(
        AuditEvent.objects.filter(workspace_id=record.workspace_id, record_id=record.pk).order_by(
            "-created_at", "-id"
        )[: limit + 1]
    )
    more = len(events) > limit
    entries = [timeline_entry(event) for event in events[:limit]]
    verdicts = clarification_reviews_for(
        [e.event.pk for e in entries if e.review_url], workspace_id=record.workspace_id
    )
    for entry in entries:
        entry.verdict = verdicts.get(entry.event.pk)
        entry.clarifications = clarifications(
            entry.event.review_evidence,
            entry.event.agent_reported_clarification,
            entry.verdict,
            entry.review_url,
        )
    return entries, more
