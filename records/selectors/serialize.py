"""How rows become dicts: one serialiser per entity, used by reads, writes and the audit trail.

Three views, each a subset of the next: "state" (what a change can alter: the audit's before
and after), "write" (adds IDs and timestamps), "read" (adds what a reader needs around it)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from records.acting import acted_by
from records.errors import invalid
from records.models import AuditEvent, Collection, Record, RecordVersion, Relationship
from records.selectors.clarification_reviews import clarification_reviews_for
from records.selectors.event_changes import changed_paths
from records.validation import canonical_json

View = Literal["state", "write", "read"]

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


def record_dict(
    record: Record,
    *,
    view: View = "read",
    aliases: list[str] | None = None,
    version: RecordVersion | None = None,
) -> dict[str, Any]:
    """A record as the view shows it ("read" needs record.collection). aliases: when the caller
    has them, else read; version: the record as it stood at that stored version."""
    state: Record | RecordVersion = record if version is None else version
    if aliases is None:
        aliases = (
            sorted(record.aliases.values_list("alias", flat=True))
            if version is None
            else version.aliases
        )
    item: dict[str, Any] = {}
    if view != "state":
        item["record_id"] = record.pk
    item["collection_id"] = record.collection_id
    if view == "read":
        item["collection_name"] = record.collection.name
    item |= {"title": state.title, "data": state.data, "version": state.version}
    if view == "read":
        item["status"] = "archived" if state.archived_at else "active"
    if view != "state":
        updated_at = record.updated_at if version is None else version.recorded_at
        item |= {"created_at": iso(record.created_at), "updated_at": iso(updated_at)}
    item["archived_at"] = iso(state.archived_at)
    if view == "read":
        item["created_by"] = record.created_by
    item["aliases"] = aliases
    return item


def collection_dict(
    collection: Collection, *, view: View = "read", aliases: list[str] | None = None
) -> dict[str, Any]:
    """A collection as the view shows it (its policy in state and reads, not in a write's
    reply); aliases: when the caller has them, else read."""
    if aliases is None:
        aliases = sorted(collection.aliases.values_list("alias", flat=True))
    item: dict[str, Any] = {} if view == "state" else {"collection_id": collection.pk}
    item |= {
        "name": collection.name,
        "purpose": collection.purpose,
        "record_meaning": collection.record_meaning,
        "typical_fields": collection.typical_fields,
        "relationship_guidance": collection.relationship_guidance,
        "aliases": aliases,
    }
    if view != "write":
        item["requires_approval"] = collection.requires_approval
    return item


def relationship_dict(rel: Relationship) -> dict[str, Any]:
    return {
        "relationship_id": rel.pk,
        "source_id": rel.source_id,
        "relationship_type": rel.relationship_type,
        "target_id": rel.target_id,
    }


def _acted_through(event: AuditEvent) -> dict[str, str]:
    """`by`, an agent acting for actor_id's person over HTTP; nothing when actor_id says all."""
    return {"by": acted_by(event)} if event.credential else {}


def _event_dict(event: AuditEvent) -> dict[str, Any]:
    return {
        "event_id": event.pk,
        "kind": event.kind,
        "entity_type": event.entity_type,
        "entity_id": event.entity_id,
        "record_id": event.record_id or None,
        "collection_id": event.collection_id or None,
        "actor_id": event.actor_id,
        **_acted_through(event),
        "created_at": iso(event.created_at),
        "before": event.before,
        "after": event.after,
        "decision_reason": event.decision_reason or None,
        "agent_reported_clarification": event.agent_reported_clarification or None,
        "review_evidence": event.review_evidence,
        "action_id": event.action_id or None,
        "item_index": event.item_index,
    }


def _event_summary(event: AuditEvent) -> dict[str, Any]:
    """An event as record context shows it: what changed (paths, or the link), who, when and
    why; no snapshots, no empty fields."""
    item: dict[str, Any] = {
        "event_id": event.pk,
        "kind": event.kind,
        "actor_id": event.actor_id,
        **_acted_through(event),
        "created_at": iso(event.created_at),
    }
    if event.entity_type == "relationship":
        link = event.after or event.before or {}
        item["link"] = {
            key: link.get(key) for key in ("source_id", "relationship_type", "target_id")
        }
    elif isinstance(event.before, dict) and isinstance(event.after, dict):
        item["changes"] = changed_paths(event.before, event.after)
    optional = {
        "decision_reason": event.decision_reason,
        "agent_reported_clarification": event.agent_reported_clarification,
        "action_id": event.action_id,
        "item_index": event.item_index,
    }
    item |= {key: value for key, value in optional.items() if value not in (None, "")}
    return item


def event_dicts(events: list[AuditEvent], *, compact: bool = False) -> list[dict[str, Any]]:
    """Events as dicts, each agent-reported clarification with a person's verdict if any.

    compact: changed paths instead of before/after snapshots (see _event_summary).
    """
    verdicts = clarification_reviews_for(e.pk for e in events if e.agent_reported_clarification)
    render = _event_summary if compact else _event_dict
    result = []
    for event in events:
        item = render(event)
        if event.agent_reported_clarification:
            verdict = verdicts.get(event.pk)
            item["clarification_review"] = (
                {
                    "state": verdict["state"],
                    "reviewer_id": verdict["reviewer_id"],
                    "note": verdict["note"],
                    "reviewed_at": verdict["reviewed_at"],
                }
                if verdict
                else {"state": "unreviewed"}
            )
        result.append(item)
    return result


def clip(text: Any, limit: int) -> Any:
    """A string longer than limit cut to limit characters ending in "…"; anything else as it is."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def data_preview(data: Any) -> tuple[str, bool]:
    """Canonical JSON cut at PREVIEW_CHARS; a cut preview may not parse as JSON."""
    text = canonical_json(data)
    if len(text) <= PREVIEW_CHARS:
        return text, False
    return text[:PREVIEW_CHARS], True
