"""How rows become dicts: one serialiser per entity, used by reads, writes and the audit trail.

Three views, each a subset of the next: "state" (what a change can alter: the audit's before
and after), "write" (adds IDs and timestamps), "read" (adds what a reader needs around it)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any, Literal

from django.db.models import QuerySet

from records.acting import acted_by
from records.errors import invalid
from records.models import AuditEvent, Collection, Record, RecordVersion, Relationship
from records.selectors.clarification_reviews import clarification_reviews_for
from records.validation import canonical_json

View = Literal["state", "write", "read"]

PREVIEW_CHARS = 500
# A changed value longer than this (as canonical JSON) is cut; the full value is in the history.
VALUE_CHARS = 200
# The version moves on every change and says nothing of its own.
UNCHANGING_KEYS = frozenset({"version"})
_MISSING = object()
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


def aliases_by_owner(aliases: QuerySet[Any], owner: str) -> dict[str, list[str]]:
    """Each owner's aliases (by the `owner` column), sorted as record_dict sorts them."""
    found: dict[str, list[str]] = defaultdict(list)
    for owner_id, alias in sorted(aliases.values_list(owner, "alias")):
        found[owner_id].append(alias)
    return found


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


def changed_paths(before: Any, after: Any, path: list[str] | None = None) -> list[dict[str, Any]]:
    """What an audit event changed (record context and the change feed; the snapshots stay in
    get_record_history): every leaf that differs, {"path", "old", "new"}, in key order; objects
    compared key by key, anything else whole; a key that appears or disappears says "added" or
    "removed"."""
    path = path or []
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            change
            for key in sorted(before.keys() | after.keys())
            if path or key not in UNCHANGING_KEYS
            for change in changed_paths(
                before.get(key, _MISSING), after.get(key, _MISSING), [*path, key]
            )
        ]
    if before == after:
        return []
    change: dict[str, Any] = {"path": path}
    if before is _MISSING:
        change["added"] = True
    if after is _MISSING:
        change["removed"] = True
    change["old"] = _short(None if before is _MISSING else before, change)
    change["new"] = _short(None if after is _MISSING else after, change)
    return [change]


def _short(value: Any, change: dict[str, Any]) -> Any:
    text = canonical_json(value)
    if len(text) <= VALUE_CHARS:
        return value
    change["cut"] = True
    return value[:VALUE_CHARS] + "…" if isinstance(value, str) else text[:VALUE_CHARS] + "…"


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
            shown = {k: v for k, v in verdict.items() if k != "review_count"} if verdict else {}
            item["clarification_review"] = shown or {"state": "unreviewed"}
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
