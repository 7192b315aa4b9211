"""One record in full, its one-hop links and recent history, now or as of a past time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from records import validation as v
from records.errors import not_found
from records.models import AuditEvent, Record, Relationship
from records.selectors.arguments import bounded_int, timestamp
from records.selectors.history import history_cursor, history_fingerprint
from records.selectors.serialize import CLARIFICATION_NOTE, event_dicts, iso, record_dict
from records.selectors.versions import state_as_of

MAX_RELATIONSHIPS = 100
MAX_EVENTS = 100
AS_OF_LINKS_NOTE = (
    "As-of read: links are those existing now that were created by as_of; links removed "
    "since are not shown here (get_record_history lists relationship.deleted events)."
)


def record_context(
    *,
    workspace_id: str,
    record_id: Any,
    relationship_limit: Any = 20,
    event_limit: Any = 10,
    as_of: Any = None,
) -> dict[str, Any]:
    record_id = v.record_id(record_id)
    relationship_limit = bounded_int(
        relationship_limit, "relationship_limit", low=1, high=MAX_RELATIONSHIPS
    )
    event_limit = bounded_int(event_limit, "event_limit", low=0, high=MAX_EVENTS)
    at = None if as_of is None else timestamp(as_of, "as_of")
    record = (
        Record.objects.select_related("collection")
        .filter(workspace_id=workspace_id, pk=record_id)
        .first()
    )
    if record is None:
        raise not_found("record", record_id)
    result: dict[str, Any] = {
        "record": record_dict(record) if at is None else state_as_of(record, at),
        "links": _links(workspace_id, record_id, relationship_limit, at),
    }
    if event_limit == 0:
        result |= {"events": None, "events_omitted": True}
    else:
        result |= _recent_events(workspace_id, record_id, event_limit, at)
    return result


def _links(workspace_id: str, record_id: str, limit: int, at: datetime | None) -> dict[str, Any]:
    links: dict[str, Any] = {}
    for direction, own_side, other_side in (
        ("outgoing", "source_id", "target"),
        ("incoming", "target_id", "source"),
    ):
        rows = Relationship.objects.filter(workspace_id=workspace_id, **{own_side: record_id})
        if at is not None:
            rows = rows.filter(created_at__lte=at)
        values = list(
            rows.order_by("created_at", "id").values(
                "id",
                "relationship_type",
                "created_at",
                f"{other_side}_id",
                f"{other_side}__title",
                f"{other_side}__collection_id",
                f"{other_side}__archived_at",
            )[: limit + 1]
        )
        links[direction] = [
            {
                "relationship_id": row["id"],
                "relationship_type": row["relationship_type"],
                "created_at": iso(row["created_at"]),
                "record": {
                    "record_id": row[f"{other_side}_id"],
                    "title": row[f"{other_side}__title"],
                    "collection_id": row[f"{other_side}__collection_id"],
                    "archived_at": iso(row[f"{other_side}__archived_at"]),
                },
            }
            for row in values[:limit]
        ]
        links[f"{direction}_truncated"] = len(values) > limit
    if at is not None:
        links["note"] = AS_OF_LINKS_NOTE
    return links


def _recent_events(
    workspace_id: str, record_id: str, limit: int, at: datetime | None
) -> dict[str, Any]:
    events = AuditEvent.objects.filter(workspace_id=workspace_id, record_id=record_id)
    if at is not None:
        events = events.filter(created_at__lte=at)
    page = list(events.order_by("-created_at", "-id")[: limit + 1])
    truncated = len(page) > limit
    page = page[:limit]
    return {
        "events": event_dicts(list(page)),
        "events_omitted": False,
        "events_truncated": truncated,
        # Continue with get_record_history(record_id, cursor=...) for older events.
        "history_next_cursor": (
            history_cursor(history_fingerprint(workspace_id, "record", record_id, at), page[-1])
            if truncated
            else None
        ),
        "events_note": CLARIFICATION_NOTE,
    }
