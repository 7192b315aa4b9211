"""A record's audit trail as a person reads it: who, when, what changed field by field, and why,
with agent-reported clarifications beside any verdict on them. Two queries however long.

What the user is said to have answered comes from two sources, never mixed: an answer the user
gave in the client's own dialog (MCP elicitation, `user_confirmed_in_client`) and the agent's
own unverifiable account, which a person may confirm or dispute
(templates/records/clarifications.html draws both)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from records.acting import by_person
from records.admin.common import shorten
from records.models import AuditEvent, Record
from records.selectors import clarification_reviews_for
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
_MISSING = object()
CLIENT_CONFIRMATION = "user_confirmed_in_client"


def _from_client(confirmation: dict[str, Any]) -> dict[str, Any]:
    client = confirmation.get("client") or {}
    named = " ".join(str(client.get(k) or "") for k in ("name", "version")).strip()
    return {
        "by_user": True,
        "text": str(confirmation.get("answer", "")),
        "client": named or "an unnamed client",
        "at": str(confirmation.get("at", ""))[:19].replace("T", " "),
        "question": str(confirmation.get("question", "")),
    }


def clarifications(
    evidence: Any,
    agent_text: str = "",
    verdict: Any = None,
    review_url: str = "",
) -> list[dict[str, Any]]:
    """Each clarification of a write or an event: the user's answers in the client (kept on its
    cited reviews, or an import's row decisions) first, then the agent-reported text with a
    person's verdict on it (a state, or a stored verdict)."""
    entries = evidence.values() if isinstance(evidence, dict) else evidence or []
    shown = [
        _from_client(e[CLIENT_CONFIRMATION])
        for e in entries
        if isinstance(e, dict) and isinstance(e.get(CLIENT_CONFIRMATION), dict)
    ]
    if agent_text.strip():
        stored = verdict if isinstance(verdict, dict) else {"state": verdict or ""}
        shown.append(
            {
                "by_user": False,
                "text": agent_text,
                "verdict": str(stored.get("state") or ""),
                "verdict_by": str(stored.get("reviewer_id") or ""),
                "verdict_note": str(stored.get("note") or ""),
                "review_url": review_url,
            }
        )
    return shown


@dataclass
class FieldChange:
    path: str
    kind: str  # added | changed | removed | unchanged
    before: str = ""
    after: str = ""


def show(value: Any, limit: int = VALUE_LIMIT) -> str:
    return shorten(value if isinstance(value, str) else canonical_json(value), limit)


def _compare(path: str, before: Any, after: Any, *, deep: bool = False) -> list[FieldChange]:
    """Deep: objects walked key by key, so history reads `data.address.city: Pune → Delhi` as
    the review page does rather than two whole objects."""
    if deep and isinstance(before, dict) and isinstance(after, dict):
        return _by_key(f"{path}.", before, after, deep=True)
    if before is _MISSING:
        return [FieldChange(path, "added", after=show(after))]
    if after is _MISSING:
        return [FieldChange(path, "removed", before=show(before))]
    if canonical_json(before) == canonical_json(after):
        return []
    return [FieldChange(path, "changed", show(before), show(after))]


def _by_key(prefix: str, before: Any, after: Any, *, deep: bool = False) -> list[FieldChange]:
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    changes: list[FieldChange] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        changes += _compare(f"{prefix}{key}", old, new, deep=deep)
    return changes


def state_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[FieldChange]:
    """Title, every data key, aliases and archival, compared between two record states."""
    before, after = before or {}, after or {}
    changes: list[FieldChange] = []
    if "title" in after or "title" in before:
        changes += _compare(
            "title", before.get("title") if before else _MISSING, after.get("title")
        )
    changes += _compare("data", before.get("data") or {}, after.get("data") or {}, deep=True)
    old_aliases, new_aliases = set(before.get("aliases") or []), set(after.get("aliases") or [])
    changes += [FieldChange("alias", "added", after=a) for a in sorted(new_aliases - old_aliases)]
    changes += [
        FieldChange("alias", "removed", before=a) for a in sorted(old_aliases - new_aliases)
    ]
    if before and before.get("archived_at") != after.get("archived_at"):
        was, now = (state.get("archived_at") or "no" for state in (before, after))
        changes.append(FieldChange("archived", "changed", show(was), show(now)))
    return changes


def event_changes(event: AuditEvent) -> list[FieldChange]:
    """What one event changed, field by field: a record's title, data, aliases and archival;
    any other state (a collection's, a link's, a decision's) key by key."""
    if event.entity_type == "record":
        return state_changes(event.before, event.after)
    return _by_key("", event.before, event.after)


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


def _decided_by(event: AuditEvent) -> tuple[str, str]:
    """(who let an agent's write through, who turned it down) as this event tells it."""
    if event.kind == "action.approved":
        return event.actor_id, ""
    if event.kind == "action.rejected":
        return "", event.actor_id
    evidence = event.review_evidence or []
    approvals = (e["approved_by"] for e in evidence if isinstance(e, dict) and e.get("approved_by"))
    return str(next(approvals, "")), ""


def record_timeline(record: Record, limit: int = 50) -> tuple[list[dict[str, Any]], bool]:
    """The newest `limit` events about the record, newest first, and whether older ones exist."""
    about = AuditEvent.objects.filter(workspace_id=record.workspace_id, record_id=record.pk)
    events = list(about.order_by("-created_at", "-id")[: limit + 1])
    events, more = events[:limit], len(events) > limit
    reviewed = [e.pk for e in events if e.agent_reported_clarification.strip()]
    verdicts = clarification_reviews_for(reviewed, workspace_id=record.workspace_id)
    entries = []
    for event in events:
        review_url = reverse("admin:records_auditevent_review", args=[event.pk])
        approved_by, rejected_by = _decided_by(event)
        entries.append(
            {
                "event": event,
                "headline": readable_kind(event.kind),
                "by_person": by_person(event),
                "approved_by": approved_by,
                "rejected_by": rejected_by,
                "changes": state_changes(event.before, event.after)
                if event.entity_type == "record"
                else [],
                "link": _link_summary(event) if event.entity_type == "relationship" else None,
                "clarifications": clarifications(
                    event.review_evidence,
                    event.agent_reported_clarification,
                    verdicts.get(event.pk),
                    review_url,
                ),
            }
        )
    return entries, more
