"""What changed in a workspace: a page of its audit log, grouped per record, by title.

The change feed an agent reads to catch up (what others did while it was away). Positions are
audit event IDs, which grow with every event; a page is one indexed range scan of the
workspace's log (`audit_ws` orders by time, the primary key by ID), whatever the log's length.
Each change says what happened in a few words, who did it and why, and for an edit which
fields moved (paths only: the values are in `get_record_history`), so a page stays small.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from records.acting import acted_by, acted_by_lookup
from records.models import AuditEvent, Collection, Record
from records.selectors.scoped import values_by_id

REASON_CHARS = 160
TITLE_CHARS = 120
MAX_FIELD_PATHS = 8


@dataclass(frozen=True)
class ChangeWindow:
    """Which events a page covers: after or before an event ID, at or after a time."""

    after_id: int | None = None
    before_id: int | None = None
    since: datetime | None = None
    # Events stamped later than this are left for a later read (see workflow.change_feed).
    settled_before: datetime | None = None
    collection_id: str | None = None
    actor_id: str | None = None
    newest_first: bool = False


def change_events(workspace_id: str, window: ChangeWindow, limit: int) -> list[AuditEvent]:
    """Up to limit + 1 events of the window, in its order (the extra one says there is more)."""
    order = "-id" if window.newest_first else "id"
    return list(_in_window(workspace_id, window).order_by(order)[: limit + 1])


def count_events(workspace_id: str, window: ChangeWindow, cap: int) -> int:
    """How many events a read of the window would return, counting at most `cap` (a count
    over a long history would cost what the history does)."""
    return _in_window(workspace_id, window).order_by("id")[:cap].count()


def _in_window(workspace_id: str, window: ChangeWindow) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.filter(workspace_id=workspace_id)
    if window.after_id is not None:
        events = events.filter(id__gt=window.after_id)
    if window.before_id is not None:
        events = events.filter(id__lt=window.before_id)
    if window.since is not None:
        events = events.filter(created_at__gte=window.since)
    if window.settled_before is not None:
        events = events.filter(created_at__lt=window.settled_before)
    if window.collection_id is not None:
        events = events.filter(collection_id=window.collection_id)
    if window.actor_id is not None:
        events = events.filter(acted_by_lookup(window.actor_id))
    return events


def grouped_changes(workspace_id: str, events: list[AuditEvent]) -> list[dict[str, Any]]:
    """The events as groups, one per record (or per collection for the collection's own
    events), in the order each group's first event came; titles as they are now."""
    record_ids = {e.record_id for e in events if e.record_id} | _link_targets(events)
    collection_ids = {e.collection_id for e in events if e.collection_id}
    records: dict[str, dict[str, Any]] = {
        row["id"]: row
        for row in values_by_id(
            Record.objects,
            workspace_id=workspace_id,
            ids=record_ids,
            fields=["id", "title", "collection_id", "archived_at"],
        )
    }
    collection_ids |= {row["collection_id"] for row in records.values()}
    names = dict(
        Collection.objects.filter(workspace_id=workspace_id, pk__in=collection_ids).values_list(
            "id", "name"
        )
    )
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for event in events:
        key, group = _group_for(event, records, names)
        groups.setdefault(key, group)["changes"].append(_change(event, records))
    return list(groups.values())


def _group_for(
    event: AuditEvent, records: dict[str, dict[str, Any]], names: dict[str, str]
) -> tuple[tuple[str, str], dict[str, Any]]:
    if event.record_id:
        row = records.get(event.record_id)
        group: dict[str, Any] = {"record_id": event.record_id}
        if row is None:
            group["title"] = None
            group["status"] = "removed"
        else:
            group["title"] = _clip(row["title"], TITLE_CHARS)
            group["collection"] = names.get(row["collection_id"])
            group["status"] = "archived" if row["archived_at"] else "active"
        return ("record", event.record_id), group | {"changes": []}
    if event.entity_type == "collection" or event.collection_id:
        collection_id = event.collection_id or event.entity_id
        group = {"collection_id": collection_id, "collection": names.get(collection_id)}
        return ("collection", collection_id), group | {"changes": []}
    group = {"entity_type": event.entity_type, "entity_id": event.entity_id}
    return (event.entity_type, event.entity_id), group | {"changes": []}


def _link_targets(events: list[AuditEvent]) -> set[str]:
    targets = set()
    for event in events:
        if event.entity_type == "relationship":
            state = event.after or event.before
            if isinstance(state, dict) and isinstance(state.get("target_id"), str):
                targets.add(state["target_id"])
    return targets


# A link event is filed under its source record: said as "created" or "deleted" it read as
# the record's own creation or deletion, so it names the link and both ends instead.
LINK_WORDS = {"relationship.created": "linked", "relationship.deleted": "unlinked"}


def _change(event: AuditEvent, records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    change: dict[str, Any] = {
        "what": LINK_WORDS.get(event.kind) or event.kind.split(".", 1)[-1].replace("_", " "),
        "by": acted_by(event),
        "at": event.created_at.isoformat(timespec="seconds"),
    }
    after = event.after if isinstance(event.after, dict) else {}
    before = event.before if isinstance(event.before, dict) else {}
    if event.entity_type == "relationship":
        state = after or before
        change["link"] = {
            "type": state.get("relationship_type"),
            "source_id": state.get("source_id"),
            "source_title": _title(records, state.get("source_id"), None),
            "target_id": state.get("target_id"),
            "target_title": _title(records, state.get("target_id"), state.get("target_title")),
        }
    elif event.entity_type == "action":  # a person's decision on an agent's write, or stale
        change["action_id"] = event.entity_id
        change["prepared_by"] = before.get("prepared_by")
    elif event.kind == "record.updated":
        paths = changed_paths(before.get("data"), after.get("data"))
        change["fields"] = paths[:MAX_FIELD_PATHS]
        if len(paths) > MAX_FIELD_PATHS:
            change["more_fields"] = len(paths) - MAX_FIELD_PATHS
    elif event.kind == "record.renamed":
        change["from"] = _clip(before.get("title"), TITLE_CHARS)
        change["to"] = _clip(after.get("title"), TITLE_CHARS)
    if event.decision_reason:
        change["why"] = _clip(event.decision_reason, REASON_CHARS)
    return change


def changed_paths(before: Any, after: Any, prefix: str = "") -> list[str]:
    """Dotted paths whose values differ between two JSON values (objects compared by key)."""
    if isinstance(before, dict) and isinstance(after, dict):
        paths: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in before or key not in after:
                paths.append(path)
            else:
                paths.extend(changed_paths(before[key], after[key], path))
        return paths
    if before == after and type(before) is type(after):
        return []
    return [prefix] if prefix else ["data"]


def _title(records: dict[str, dict[str, Any]], record_id: Any, then: Any) -> Any:
    """A link end's title as it is now, or as the event recorded it if the record is gone."""
    row = records.get(record_id) if isinstance(record_id, str) else None
    return _clip(row["title"] if row else then, TITLE_CHARS)


def _clip(text: Any, limit: int) -> Any:
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"
