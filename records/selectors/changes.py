"""What changed in a workspace: a page of its audit log, as entries by title.

The change feed an agent reads to catch up. Positions are audit event IDs; a page is one
indexed range scan of the workspace's log (`audit_ws` by time, the primary key by ID). A run of
changes by one actor with one reason (an import, a batch) that touches more than a few records
is one entry with counts and a few titles, so catch-up costs what changed, not how much was
written; other changes are grouped per record, each with who, when, why and, for an edit, which
fields moved (paths only: the values are in `get_record_history`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import QuerySet

from records.acting import acted_by, acted_by_lookup
from records.models import AuditEvent, Collection, Record
from records.selectors.scoped import values_by_id
from records.selectors.serialize import changed_paths, clip

REASON_CHARS = 160
TITLE_CHARS = 120
MAX_FIELD_PATHS = 8
FOLD_OVER = 5  # a run touching more records than this is one entry
TITLES_SHOWN = 3


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
    fold: bool = True


def change_events(workspace_id: str, window: ChangeWindow, limit: int) -> list[AuditEvent]:
    """Up to limit + 1 events of the window, in its order (the extra one says there is more)."""
    order = "-id" if window.newest_first else "id"
    return list(_in_window(workspace_id, window).order_by(order)[: limit + 1])


def count_events(workspace_id: str, window: ChangeWindow, cap: int) -> int:
    """How many events a read of the window would return, counting at most `cap` (a count
    over a long history would cost what the history does)."""
    return _in_window(workspace_id, window).order_by("id")[:cap].count()


def _in_window(workspace_id: str, window: ChangeWindow) -> QuerySet[AuditEvent]:
    lookups = {
        "id__gt": window.after_id,
        "id__lt": window.before_id,
        "created_at__gte": window.since,
        "created_at__lt": window.settled_before,
        "collection_id": window.collection_id,
    }
    given = {lookup: value for lookup, value in lookups.items() if value is not None}
    events = AuditEvent.objects.filter(workspace_id=workspace_id, **given)
    return events if window.actor_id is None else events.filter(acted_by_lookup(window.actor_id))


def runs(events: list[AuditEvent]) -> list[list[AuditEvent]]:
    """Consecutive events by one actor with one reason (or of one prepared action)."""
    found: list[list[AuditEvent]] = []
    for event in events:
        last = found[-1][-1] if found else None
        if last is None or acted_by(last) != acted_by(event):
            found.append([event])
        elif last.decision_reason == event.decision_reason or (
            event.action_id and event.action_id == last.action_id
        ):
            found[-1].append(event)
        else:
            found.append([event])
    return found


def _key(event: AuditEvent) -> tuple[str, str]:
    if event.record_id:
        return ("record", event.record_id)
    if event.entity_type == "collection" or event.collection_id:
        return ("collection", event.collection_id or event.entity_id)
    return (event.entity_type, event.entity_id)


def change_page(
    workspace_id: str,
    events: list[AuditEvent],
    limit: int,
    fold: bool,
    run_cursor: Callable[[int, int], str],
) -> tuple[list[dict[str, Any]], int]:
    """Up to `limit` entries from the events, in order, and how many events they cover.
    `run_cursor(first_id, last_id)` is the cursor that reads a folded run whole."""
    plan: list[AuditEvent | list[AuditEvent]] = []
    keys: set[tuple[str, str]] = set()
    used = entries = 0
    for run in runs(events):
        if fold and len({_key(e) for e in run}) > FOLD_OVER:
            if entries >= limit:
                break
            plan.append(run)
            entries, used = entries + 1, used + len(run)
            continue
        for event in run:
            if _key(event) not in keys:
                if entries >= limit:
                    return _described(workspace_id, plan, run_cursor), used
                keys.add(_key(event))
                entries += 1
            plan.append(event)
            used += 1
    return _described(workspace_id, plan, run_cursor), used


def _described(
    workspace_id: str, plan: list[Any], run_cursor: Callable[[int, int], str]
) -> list[dict[str, Any]]:
    """The entries, titles as they are now: a group per record (or collection), in the order
    of each group's first event, and one entry per folded run in its place."""
    events = [e for item in plan for e in (item if isinstance(item, list) else [item])]
    records, names = records_and_names(workspace_id, events)
    entries: dict[Any, dict[str, Any]] = {}
    for item in plan:
        if isinstance(item, list):
            entries[id(item)] = _folded(item, records, names, run_cursor)
            continue
        key = _key(item)
        if key not in entries:
            entries[key] = _group(key, records, names)
        entries[key]["changes"].append(_change(item, records))
    return list(entries.values())


def records_and_names(
    workspace_id: str, events: list[AuditEvent], ends: bool = True
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The events' records (and links' other ends) as they are now, and collections' names."""
    record_ids = {e.record_id for e in events if e.record_id}
    record_ids |= _link_targets(events) if ends else set()
    fields = ["id", "title", "collection_id", "archived_at"]
    rows = values_by_id(Record.objects, workspace_id=workspace_id, ids=record_ids, fields=fields)
    records = {row["id"]: row for row in rows}
    collection_ids = {e.collection_id for e in events if e.collection_id}
    collection_ids |= {row["collection_id"] for row in records.values()}
    collections = Collection.objects.filter(workspace_id=workspace_id, pk__in=collection_ids)
    return records, dict(collections.values_list("id", "name"))


def _group(key: tuple[str, str], records: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    kind, entity_id = key
    if kind == "record":
        row = records.get(entity_id)
        if row is None:
            return {"record_id": entity_id, "title": None, "status": "removed", "changes": []}
        return {
            "record_id": entity_id,
            "title": clip(row["title"], TITLE_CHARS),
            "collection": names.get(row["collection_id"]),
            "status": "archived" if row["archived_at"] else "active",
            "changes": [],
        }
    if kind == "collection":
        return {"collection_id": entity_id, "collection": names.get(entity_id), "changes": []}
    return {"entity_type": kind, "entity_id": entity_id, "changes": []}


def _folded(
    run: list[AuditEvent],
    records: dict[str, Any],
    names: dict[str, str],
    run_cursor: Callable[[int, int], str],
) -> dict[str, Any]:
    """One entry for a run: who, why, when, counts, the records touched and a few titles."""
    touched = list(dict.fromkeys(e.record_id for e in run if e.record_id))
    rows = [records[r] for r in touched if r in records]
    ids = [e.pk for e in run]
    entry: dict[str, Any] = {
        "by": acted_by(run[0]),
        "why": clip(run[0].decision_reason, REASON_CHARS) or None,
        "at": minute(run[0].created_at),
        "did": dict(Counter(_what(e) for e in run).most_common()),
        "records": len(touched),
        "collections": sorted({names.get(r["collection_id"], "?") for r in rows}),
        "titles": [clip(r["title"], TITLE_CHARS) for r in rows[:TITLES_SHOWN]],
        "expand": run_cursor(min(ids), max(ids)),
    }
    return {key: value for key, value in entry.items() if value is not None}


# A link event is filed under its source record: said as "created" or "deleted" it read as
# the record's own creation or deletion, so it names the link and both ends instead.
LINK_WORDS = {"relationship.created": "linked", "relationship.deleted": "unlinked"}


def _what(event: AuditEvent) -> str:
    return LINK_WORDS.get(event.kind) or event.kind.split(".", 1)[-1].replace("_", " ")


def minute(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _link_targets(events: list[AuditEvent]) -> set[str]:
    states = [e.after or e.before for e in events if e.entity_type == "relationship"]
    return {
        s["target_id"]
        for s in states
        if isinstance(s, dict) and isinstance(s.get("target_id"), str)
    }


def _change(event: AuditEvent, records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    change: dict[str, Any] = {"what": _what(event), "by": acted_by(event)}
    change["at"] = minute(event.created_at)
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
        moved = changed_paths({"data": before.get("data")}, {"data": after.get("data")})
        paths = [".".join(map(str, c["path"][1:])) or "data" for c in moved]
        change["fields"] = paths[:MAX_FIELD_PATHS]
        if len(paths) > MAX_FIELD_PATHS:
            change["more_fields"] = len(paths) - MAX_FIELD_PATHS
    elif event.kind == "record.renamed":
        change["from"] = clip(before.get("title"), TITLE_CHARS)
        change["to"] = clip(after.get("title"), TITLE_CHARS)
    if event.decision_reason:
        change["why"] = clip(event.decision_reason, REASON_CHARS)
    return change


def _title(records: dict[str, dict[str, Any]], record_id: Any, then: Any) -> Any:
    """A link end's title as it is now, or as the event recorded it if the record is gone."""
    row = records.get(record_id) if isinstance(record_id, str) else None
    return clip(row["title"] if row else then, TITLE_CHARS)
