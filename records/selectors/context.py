"""One record, its one-hop links and recent history, now or as of a past time, in a reply kept
under 8,000 characters unless asked for whole (context_budget)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection

from records import validation as v
from records.errors import invalid
from records.models import AuditEvent, Record, RecordAlias
from records.selectors.arguments import bounded_int, timestamp
from records.selectors.context_budget import within_budget
from records.selectors.history import history_cursor, history_fingerprint
from records.selectors.scoped import in_workspace
from records.selectors.serialize import CLARIFICATION_NOTE, event_dicts, record_dict
from records.selectors.sql import Sql, fetch_all, placeholders, vendor
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
    whole: Any = False,
) -> dict[str, Any]:
    """whole: nothing cut to keep the reply under REPLY_CHARS (see context_budget)."""
    record_id = v.record_id(record_id)
    if not isinstance(whole, bool):
        raise invalid("whole", "must be true or false.")
    relationship_limit = bounded_int(
        relationship_limit, "relationship_limit", low=1, high=MAX_RELATIONSHIPS
    )
    event_limit = bounded_int(event_limit, "event_limit", low=0, high=MAX_EVENTS)
    at = None if as_of is None else timestamp(as_of, "as_of")
    record = in_workspace(
        Record.objects.select_related("collection"),
        workspace_id=workspace_id,
        pk=record_id,
        kind="record",
    )
    result: dict[str, Any] = {
        "record": record_dict(record) if at is None else state_as_of(record, at),
        "links": _links(workspace_id, record_id, relationship_limit, at),
    }
    if event_limit == 0:
        result |= {"events": None, "events_omitted": True}
    else:
        result |= _recent_events(workspace_id, record_id, event_limit, at)
    if whole:
        return result
    return _lean(within_budget(result, history_fingerprint(workspace_id, "record", record_id, at)))


# Said only when they say something: a false flag, a null or an empty list is left out.
QUIET_WHEN_EMPTY = ("outgoing_truncated", "incoming_truncated", "events_truncated")


def _lean(context: dict[str, Any]) -> dict[str, Any]:
    """The context without what says nothing: null or empty record fields, false flags, and in
    events the action and item behind them (get_record_history has them) and the link end
    that is the record itself."""
    record = context["record"]
    lean = {**context, "record": {k: v for k, v in record.items() if v not in (None, [])}}
    quiet = ["events_omitted", "events_truncated"]
    if not lean.get("events_truncated"):  # a cut history says where it goes on, even null
        quiet.append("history_next_cursor")
    for key in quiet:
        if not lean.get(key, True):
            del lean[key]
    if isinstance(lean.get("links"), dict):
        lean["links"] = {
            k: v for k, v in lean["links"].items() if not (k in QUIET_WHEN_EMPTY and not v)
        }
    if lean.get("events"):
        own = record.get("record_id")
        lean["events"] = [_lean_event(event, own) for event in lean["events"]]
    return lean


def _lean_event(event: dict[str, Any], own: str | None) -> dict[str, Any]:
    lean = {k: v for k, v in event.items() if k not in ("action_id", "item_index")}
    if isinstance(event.get("link"), dict):
        lean["link"] = {k: v for k, v in event["link"].items() if v != own}
    return lean


# Per direction: (the record's own side, the other side).
SIDES = (("outgoing", "source_id", "target_id"), ("incoming", "target_id", "source_id"))


def _link_dict(
    link_id: int, kind: str, other: str, title: str, collection: str, archived: Any
) -> dict[str, Any]:
    """A link as its other end, plus the ID to unlink by: only what a reader acts on (twenty
    links are most of a context), so the collection by name and "archived" only when it is."""
    link = {
        "relationship_id": link_id,
        "relationship_type": kind,
        "record_id": other,
        "title": title,
        "collection": collection,
    }
    return link | ({"archived": True} if archived is not None else {})


def _links(workspace_id: str, record_id: str, limit: int, at: datetime | None) -> dict[str, Any]:
    links = _ranked_links(workspace_id, [record_id], limit, at)[record_id]
    return links if at is None else links | {"note": AS_OF_LINKS_NOTE}


def record_contexts(
    *, workspace_id: str, record_ids: list[str], relationship_limit: int = 20
) -> dict[str, dict[str, Any]]:
    """Contexts of many records (search's include_context), history omitted as with
    event_limit=0: three queries however many. Records not in the workspace are left out."""
    # By primary key alone, the workspace checked on each row, and unordered (the answer
    # follows record_ids): with workspace_id in the WHERE or the model's ordering, SQLite
    # walks the workspace's record index (every record in it) rather than looking up twenty.
    records = [
        record
        for record in Record.objects.select_related("collection")
        .filter(pk__in=record_ids)
        .order_by()
        if record.workspace_id == workspace_id
    ]
    aliases: dict[str, list[str]] = {record.pk: [] for record in records}
    if records:
        for record_id, alias in RecordAlias.objects.filter(record_id__in=list(aliases)).values_list(
            "record_id", "alias"
        ):
            aliases[record_id].append(alias)
    contexts: dict[str, dict[str, Any]] = {}
    for record in records:
        contexts[record.pk] = {
            "record": record_dict(record, aliases=sorted(aliases[record.pk])),
            "links": {},
            "events": None,
            "events_omitted": True,
        }
    if contexts:
        for record_id, links in _ranked_links(
            workspace_id, list(contexts), relationship_limit
        ).items():
            contexts[record_id]["links"] = links
    return {
        record_id: _lean(contexts[record_id]) for record_id in record_ids if record_id in contexts
    }


def _ranked_links(
    workspace_id: str, record_ids: list[str], limit: int, at: datetime | None = None
) -> dict[str, dict[str, Any]]:
    """Each record's links as record_context shows them (those made by `at`), in one statement."""
    found: dict[str, dict[str, Any]] = {}
    for record_id in record_ids:
        found[record_id] = {}
        for direction, _, _ in SIDES:
            found[record_id] |= {direction: [], f"{direction}_truncated": False}
    for direction, own, rank, *link in fetch_all(
        _ranked_links_sql(workspace_id, record_ids, limit, at)
    ):
        links = found[own]
        if rank > limit:
            links[f"{direction}_truncated"] = True
        else:
            links[direction].append(_link_dict(*link))
    return found


def _ranked_links_sql(
    workspace_id: str, record_ids: list[str], limit: int, at: datetime | None
) -> Sql:
    """The first limit + 1 links of each record (the extra one says truncated), both ways, in
    one statement. Raw SQL: the ORM's window filter cost twice as much to compile as to run."""
    # Without statistics SQLite prefers the workspace index for an IN list and scans every
    # link in the workspace; its unary + keeps that index out of the plan (as traversal does).
    workspace = "+rel.workspace_id" if vendor() == "sqlite" else "rel.workspace_id"
    made_by = Sql("")
    if at is not None:
        made_by = Sql(" AND rel.created_at <= %s", (connection.ops.adapt_datetimefield_value(at),))
    parts: list[Sql] = []
    for direction, own, other in SIDES:
        ids = placeholders(record_ids)
        parts.append(
            Sql(
                f"SELECT * FROM (SELECT '{direction}' AS direction, rel.{own} AS own, "
                f"ROW_NUMBER() OVER (PARTITION BY rel.{own} ORDER BY rel.created_at, rel.id) "
                f"AS link_rank, rel.id, rel.relationship_type, rel.{other}, o.title, c.name, "
                "o.archived_at "
                f"FROM records_relationship rel JOIN records_record o ON o.id = rel.{other} "
                "JOIN records_collection c ON c.id = o.collection_id "
                f"WHERE {workspace} = %s AND rel.{own} IN ({ids.text}){made_by.text}) "
                f"AS {direction} WHERE link_rank <= %s",
                (workspace_id, *ids.params, *made_by.params, limit + 1),
            )
        )
    union = " UNION ALL ".join(part.text for part in parts)
    return Sql(f"{union} ORDER BY 1, 2, 3", tuple(p for part in parts for p in part.params))


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
        "events": event_dicts(list(page), compact=True),
        "events_omitted": False,
        "events_truncated": truncated,
        # Continue with get_record_history(record_id, cursor=...) for older events.
        "history_next_cursor": (
            history_cursor(history_fingerprint(workspace_id, "record", record_id, at), page[-1])
            if truncated
            else None
        ),
    } | ({"events_note": CLARIFICATION_NOTE} if _has_clarification(page) else {})


def _has_clarification(events: list[AuditEvent]) -> bool:
    return any(event.agent_reported_clarification for event in events)
