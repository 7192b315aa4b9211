"""One record, its one-hop links and recent history, now or as of a past time, in a reply kept
under 8,000 characters unless asked for whole (context_budget)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection

from records import validation as v
from records.errors import invalid
from records.models import Record, RecordAlias
from records.selectors.arguments import bounded_int, timestamp
from records.selectors.context_budget import within_budget
from records.selectors.history import history_fingerprint, newest, record_events, state_as_of
from records.selectors.scoped import in_workspace
from records.selectors.serialize import CLARIFICATION_NOTE, aliases_by_owner, record_dict
from records.selectors.sql import LINK_SIDES, Sql, fetch_all, joined, placeholders, vendor

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
        "links": _ranked_links(workspace_id, [record_id], relationship_limit, at)[record_id],
    }
    if at is not None:
        result["links"]["note"] = AS_OF_LINKS_NOTE
    history = history_fingerprint(workspace_id, "record", record_id, at)
    if event_limit == 0:
        result |= {"events": None, "events_omitted": True}
    else:
        events = record_events(workspace_id, record_id, at)
        page, older = newest(events, history, event_limit, compact=True)
        result |= {
            "events": page,
            "events_omitted": False,
            "events_truncated": older is not None,
            # Continue with get_record_history(record_id, cursor=...) for older events.
            "history_next_cursor": older,
        }
        if any("agent_reported_clarification" in event for event in page):
            result["events_note"] = CLARIFICATION_NOTE
    if whole:
        return result
    lean = _lean(within_budget(result, history))
    # Said twice or ordinary: the ID asked for, the collection's beside its name (unique in a
    # workspace), an active status, an update time that is the creation time.
    said = {"record_id": record_id, "collection_id": lean["record"].get("collection_id")}
    said |= {"status": "active", "updated_at": lean["record"].get("created_at")}
    return lean | {"record": {k: v for k, v in lean["record"].items() if said.get(k, ...) != v}}


# Said only when they say something: a false flag, a null or an empty list is left out.
QUIET_WHEN_EMPTY = ("outgoing_truncated", "incoming_truncated", "events_truncated")


def _lean(context: dict[str, Any]) -> dict[str, Any]:
    """The context without what says nothing: null or empty record fields, false flags, and in
    events the action and item behind them (get_record_history has them), the link end that is
    the record itself, and a listed link's other end by its title."""
    record = context["record"]
    quiet = ["events_omitted", *QUIET_WHEN_EMPTY]
    if not context.get("events_truncated"):  # a cut history says where it goes on, even null
        quiet.append("history_next_cursor")
    lean = {k: v for k, v in context.items() if v or k not in quiet}
    lean["record"] = {k: v for k, v in record.items() if v not in (None, [])}
    lean["links"] = {k: v for k, v in lean["links"].items() if v or k not in quiet}
    if lean.get("events"):
        listed = [link for side in LINK_SIDES for link in lean["links"].get(side[0], [])]
        ends = {record.get("record_id"): None} | {x["record_id"]: x["title"] for x in listed}
        lean["events"] = [_lean_event(event, ends) for event in lean["events"]]
    return lean


def _lean_event(event: dict[str, Any], ends: dict[Any, str | None]) -> dict[str, Any]:
    """ends: the record's own ID (left out) and its listed links' other ends (by title)."""
    lean = {k: v for k, v in event.items() if k not in ("action_id", "item_index")}
    if isinstance(event.get("link"), dict):
        link = {k: v for k, v in event["link"].items() if not (v in ends and ends[v] is None)}
        lean["link"] = {("title" if v in ends else k): ends.get(v, v) for k, v in link.items()}
    return lean


def record_contexts(
    *, workspace_id: str, record_ids: list[str], relationship_limit: int = 20
) -> dict[str, dict[str, Any]]:
    """Contexts of many records (search's include_context), history omitted as with
    event_limit=0: three queries however many. Records not in the workspace are left out."""
    # By primary key alone, the workspace checked on each row, and unordered (the answer
    # follows record_ids): with workspace_id in the WHERE or the model's ordering, SQLite
    # walks the workspace's record index (every record in it) rather than looking up twenty.
    records = {
        record.pk: record
        for record in Record.objects.select_related("collection")
        .filter(pk__in=record_ids)
        .order_by()
        if record.workspace_id == workspace_id
    }
    if not records:
        return {}
    aliases = aliases_by_owner(RecordAlias.objects.filter(record_id__in=list(records)), "record_id")
    links = _ranked_links(workspace_id, list(records), relationship_limit)
    return {
        record_id: _lean(
            {
                "record": record_dict(records[record_id], aliases=aliases[record_id]),
                "links": links[record_id],
                "events": None,
                "events_omitted": True,
            }
        )
        for record_id in record_ids
        if record_id in records
    }


def _ranked_links(
    workspace_id: str, record_ids: list[str], limit: int, at: datetime | None = None
) -> dict[str, dict[str, Any]]:
    """Each record's links as record_context shows them (those made by `at`), in one statement:
    per link only what a reader acts on (twenty links are most of a context), the other end,
    the ID to unlink by, its collection by name and "archived" only when it is."""
    found: dict[str, dict[str, Any]] = {
        record_id: {
            "outgoing": [],
            "outgoing_truncated": False,
            "incoming": [],
            "incoming_truncated": False,
        }
        for record_id in record_ids
    }
    rows = fetch_all(_ranked_links_sql(workspace_id, record_ids, limit, at))
    for direction, own, rank, link_id, kind, other, title, collection, archived in rows:
        if rank > limit:
            found[own][f"{direction}_truncated"] = True
            continue
        link = {
            "relationship_id": link_id,
            "relationship_type": kind,
            "record_id": other,
            "title": title,
            "collection": collection,
        }
        found[own][direction].append(link | ({"archived": True} if archived is not None else {}))
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
    ids = placeholders(record_ids)
    parts = [
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
        for direction, own, other in LINK_SIDES
    ]
    return joined(parts, " UNION ALL ").wrap("{} ORDER BY 1, 2, 3")
