"""How reads present rows: timestamps, audit events and bounded record previews."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from records.errors import invalid
from records.models import AuditEvent
from records.validation import canonical_json

PREVIEW_CHARS = 500
CLARIFICATION_NOTE = (
    "agent_reported_clarification is what the calling agent said the user told it. The server "
    "cannot verify it; it is not authenticated user consent. clarification_review shows "
    "whether a person has since confirmed or disputed it."
)


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def parse_iso_key(value: Any) -> datetime:
    """A timestamp taken back out of a cursor key."""
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.") from None
    if parsed.tzinfo is None:
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    return parsed


def event_dict(event: AuditEvent) -> dict[str, Any]:
    return {
        "event_id": event.pk,
        "kind": event.kind,
        "entity_type": event.entity_type,
        "entity_id": event.entity_id,
        "record_id": event.record_id or None,
        "collection_id": event.collection_id or None,
        "actor_id": event.actor_id,
        "created_at": iso(event.created_at),
        "before": event.before,
        "after": event.after,
        "decision_reason": event.decision_reason or None,
        "agent_reported_clarification": event.agent_reported_clarification or None,
        "review_evidence": event.review_evidence,
        "action_id": event.action_id or None,
        "item_index": event.item_index,
    }


def event_dicts(events: list[AuditEvent]) -> list[dict[str, Any]]:
    """Events as dicts, each agent-reported clarification with a person's verdict if any."""
    from records.trust import clarification_reviews_for  # trust imports services; keep lazy

    verdicts = clarification_reviews_for(e.pk for e in events if e.agent_reported_clarification)
    result = []
    for event in events:
        item = event_dict(event)
        if event.agent_reported_clarification:
            verdict = verdicts.get(event.pk)
            item["clarification_review"] = (
                {k: verdict[k] for k in ("state", "reviewer_id", "note", "reviewed_at")}
                if verdict
                else {"state": "unreviewed"}
            )
        result.append(item)
    return result


def data_preview(data: Any) -> tuple[str, bool]:
    """Canonical JSON cut at PREVIEW_CHARS; a cut preview may not parse as JSON."""
    text = canonical_json(data)
    if len(text) <= PREVIEW_CHARS:
        return text, False
    return text[:PREVIEW_CHARS], True
