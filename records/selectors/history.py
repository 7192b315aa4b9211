"""Audit histories of a record or a collection, newest first, with keyset cursors, and a record
as it stood at a past time, from its stored versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from records import validation as v
from records.errors import NOT_FOUND, AnchorError, invalid
from records.models import AuditEvent, Record, RecordVersion
from records.selectors.arguments import bounded_int, timestamp
from records.selectors.cursors import decode_cursor, encode_cursor, fingerprint
from records.selectors.scoped import collection_checked, in_workspace
from records.selectors.serialize import (
    CLARIFICATION_NOTE,
    event_dicts,
    iso,
    parse_iso_key,
    record_dict,
)

MAX_LIMIT = 100


def record_history(
    *,
    workspace_id: str,
    record_id: Any,
    limit: Any = 20,
    cursor: Any = None,
    as_of: Any = None,
) -> dict[str, Any]:
    """Events about one record; with as_of, those up to then and the record's state then."""
    record_id = v.record_id(record_id)
    record = in_workspace(Record.objects, workspace_id=workspace_id, pk=record_id, kind="record")
    at = None if as_of is None else timestamp(as_of, "as_of")
    extra: dict[str, Any] = {"record_id": record_id}
    if at is not None:
        extra["record_as_of"] = state_as_of(record, at)
    bound_to = history_fingerprint(workspace_id, "record", record_id, at)
    return _page(record_events(workspace_id, record_id, at), bound_to, limit, cursor) | extra


def collection_history(
    *, workspace_id: str, collection_id: Any, limit: Any = 20, cursor: Any = None
) -> dict[str, Any]:
    """Events about the collection itself (creation, edits, aliases, policy), not its records."""
    collection_id = v.entity_id(collection_id, "collection_id")
    collection_checked(workspace_id, collection_id)
    # By entity, not by collection_id: that index holds every record event of the collection.
    events = AuditEvent.objects.filter(
        workspace_id=workspace_id, entity_type="collection", entity_id=collection_id
    )
    bound_to = history_fingerprint(workspace_id, "collection", collection_id)
    return _page(events, bound_to, limit, cursor) | {"collection_id": collection_id}


def state_as_of(record: Record, at: datetime) -> dict[str, Any]:
    version = (
        RecordVersion.objects.filter(record_id=record.pk, recorded_at__lte=at)
        .order_by("-version")
        .first()
    )
    if version is None:
        raise AnchorError(
            NOT_FOUND,
            f"as_of: record {record.pk} did not exist yet at {at.isoformat()}; it was created "
            f"at {iso(record.created_at)}.",
            field="as_of",
            created_at=iso(record.created_at),
        )
    return record_dict(record, version=version) | {
        "as_of": at.isoformat(),
        "current_version": record.version,
    }


def record_events(workspace_id: str, record_id: str, at: datetime | None) -> QuerySet[AuditEvent]:
    """A record's events, those up to `at` when given."""
    events = AuditEvent.objects.filter(workspace_id=workspace_id, record_id=record_id)
    return events if at is None else events.filter(created_at__lte=at)


def history_fingerprint(
    workspace_id: str, entity_type: str, entity_id: str, as_of: Any = None
) -> str:
    params: dict[str, Any] = {"id": entity_id}
    if as_of is not None:
        params["as_of"] = iso(as_of)
    return fingerprint(f"{entity_type}_history", workspace_id, params)


def newest(
    events: QuerySet[AuditEvent], bound_to: str, limit: int, *, compact: bool = False
) -> tuple[list[dict[str, Any]], str | None]:
    """Up to `limit` (at least 1) events, newest first, and the cursor to the older ones
    (None when there are none)."""
    page = list(events.order_by("-created_at", "-id")[: limit + 1])
    last = page[limit - 1] if len(page) > limit else None
    older = None if last is None else encode_cursor(bound_to, [iso(last.created_at), last.pk])
    return event_dicts(page[:limit], compact=compact), older


def _page(events: QuerySet[AuditEvent], bound_to: str, limit: Any, cursor: Any) -> dict[str, Any]:
    limit = bounded_int(limit, "limit", low=1, high=MAX_LIMIT)
    key = decode_cursor(cursor, bound_to, key_length=2)
    if key is not None:
        created_at, event_id = parse_iso_key(key[0]), key[1]
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
        events = events.filter(
            Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=event_id)
        )
    page, older = newest(events, bound_to, limit)
    return {
        "events": page,
        "has_more": older is not None,
        "next_cursor": older,
        "note": CLARIFICATION_NOTE,
    }
