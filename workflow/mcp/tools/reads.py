"""Read tools: the workspace at a glance and the server's usage rules, catalog, record context,
histories and search. None of them changes anything."""

from typing import Annotated, Any, Literal

from pydantic import Field

from records import selectors
from workflow import change_feed
from workflow.digest import workspace_digest
from workflow.mcp import sdk
from workflow.mcp.envelope import ToolResult, run_tool
from workflow.mcp.instructions import current_instructions
from workflow.mcp.shapes import Conditions, GroupBy, LinkedTo, Metrics, OrderBy
from workflow.mcp.tools.base import Toolset
from workflow.reply_size import history

RecordId = Annotated[str, Field(description="Record ID (UUID).")]
Limit = Annotated[int, Field(description="Page size.", ge=1, le=100)]
Cursor = Annotated[
    str | None,
    Field(description="next_cursor of the previous page, with the same other arguments."),
]
SAME_AS_SEARCH = "As in search_records."


class ReadTools(Toolset):
    def list_collections(self) -> ToolResult:
        """List this workspace's collections: IDs, descriptions, active record counts.

        Before creating a collection use discover_collections (it issues the review ID a write
        needs). Max 1000, `truncated`.
        """
        return self._read(selectors.collection_list, locals())

    def get_record_context(
        self,
        record_id: RecordId,
        relationship_limit: Annotated[
            int, Field(description="Links per direction.", ge=1, le=100)
        ] = 20,
        event_limit: Annotated[
            int, Field(description="Recent audit events; 0 omits history.", ge=0, le=100)
        ] = 10,
        as_of: Annotated[
            str | None,
            Field(description="ISO 8601 time (UTC if no offset)."),
        ] = None,
        whole: Annotated[bool, Field(description="Not cut at 8,000 characters.")] = False,
    ) -> ToolResult:
        """Read one record: data, the `version` writes need, aliases, links, recent changes.

        Works on archived records too; `as_of` reads it as it was then.
        """
        return self._read(selectors.record_context, locals())

    def get_record_history(
        self,
        record_id: RecordId,
        limit: Limit = 20,
        cursor: Cursor = None,
        as_of: Annotated[
            str | None,
            Field(description="ISO 8601 time: only events up to then, plus the record then."),
        ] = None,
    ) -> ToolResult:
        """Page through a record's audit trail, newest first.

        For events older than get_record_context shows, pass its history_next_cursor as cursor
        (same as_of). Each change: before/after, actor, time, decision reason, evidence and the
        clarification (agent-reported, not consent). Links appear in their source record's
        history. Times are entry times, not when things happened.
        """
        return self._read(selectors.record_history, locals(), lambda r: history(r, record_id))

    def get_collection_history(
        self,
        collection_id: Annotated[str, Field(description="Collection ID (UUID).")],
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Page through a collection's own audit trail, newest first: creation, reuse, edits,
        aliases, approval policy.

        Record events are not included (get_record_history). Clarifications are
        agent-reported and unverified.
        """
        return self._read(
            selectors.collection_history, locals(), lambda r: history(r, collection_id)
        )

    def list_changes(
        self,
        since_last_read: Annotated[bool, Field(description="Start after your read mark.")] = False,
        mark_read: Annotated[
            bool,
            Field(description="Move your read mark past what is shown (with since_last_read)."),
        ] = False,
        cursor: Annotated[
            str | None,
            Field(description="next_cursor, an entry's expand, or the digest's changes_cursor."),
        ] = None,
        since: Annotated[str | None, Field(description="ISO 8601 time to start at.")] = None,
        order: Annotated[
            Literal["oldest_first", "newest_first"], Field(description="Page order.")
        ] = "oldest_first",
        collection_id: Annotated[
            str | None, Field(description="Only changes in this collection.")
        ] = None,
        by: Annotated[
            str | None, Field(description="Only changes by this actor, e.g. user:alice.")
        ] = None,
        limit: Annotated[int, Field(description="Entries per page.", ge=1, le=200)] = 50,
    ) -> ToolResult:
        """What changed in this workspace since you last looked, by anyone: per record, who,
        when, why and which fields moved; a run by one actor with one reason (an import) is
        one entry with counts.

        Catch up: since_last_read=true, mark_read=true. Changes no record; mark_read=true
        moves your own read mark.
        """
        return self._run(change_feed.list_changes, locals())

    def search_records(
        self,
        collection_id: Annotated[
            str | None,
            Field(description="Only this collection's records."),
        ] = None,
        query: Annotated[
            str | None,
            Field(description="Title substring, case-insensitive; % and _ are literal."),
        ] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(description='Exact top-level values, e.g. {"stage": "interview"}.'),
        ] = None,
        limit: Limit = 20,
        cursor: Cursor = None,
        text: Annotated[
            str | None,
            Field(
                description="Words in titles or values, as prefixes, accents and case "
                "ignored. Best first."
            ),
        ] = None,
        where: Annotated[
            Conditions | None,
            Field(
                description='All must hold, e.g. [{"field": ["offer", "ctc"], "op": "gte", '
                '"value": 30}]; typed: 38 is not "38". between takes [low, high]; dates as ISO '
                "8601 strings."
            ),
        ] = None,
        linked_to: Annotated[
            LinkedTo | None,
            Field(
                description="Only records linked to record_id (outgoing: the match is the source)."
            ),
        ] = None,
        order_by: Annotated[
            OrderBy | None,
            Field(
                description="Sort by a data field; records without a value of that type are "
                "left out."
            ),
        ] = None,
        mode: Annotated[
            Literal["words", "meaning"],
            Field(
                description='With text, "meaning" finds other wordings too (confidence none: '
                "nothing fits)."
            ),
        ] = "words",
    ) -> ToolResult:
        """Search active records by title, fields, conditions, links, text or meaning.

        All given arguments must hold; returns a page of previews (follow next_cursor).
        Archived records are left out: zero results do not prove absence. Changes nothing.
        """
        return self._read(selectors.search_records, locals())

    def traverse(
        self,
        start_record_id: RecordId,
        max_depth: Annotated[int, Field(description="Hops.", ge=1, le=4)] = 2,
        direction: Annotated[
            Literal["outgoing", "incoming", "both"],
            Field(description="outgoing: from source to target; incoming: the reverse; both."),
        ] = "both",
        relationship_types: Annotated[
            list[str] | None, Field(description="Follow only these link types.")
        ] = None,
        collection_id: Annotated[
            str | None,
            Field(description="Return only this collection's records; others are walked."),
        ] = None,
        max_nodes: Annotated[int, Field(description="Records to reach.", ge=1, le=200)] = 50,
    ) -> ToolResult:
        """Walk links from one record over several hops in one call.

        For chains like person -> applications -> interviews -> feedback. Each reached record
        once, with depth and shortest path; walked `edges` (max 500); archived ones flagged.
        `truncated`: a limit was hit, so more may exist. Only explicit links are followed.
        """
        return self._read(selectors.traverse, locals())

    def aggregate(
        self,
        collection_id: Annotated[str | None, Field(description="Collection ID.")] = None,
        where: Annotated[Conditions | None, Field(description=SAME_AS_SEARCH)] = None,
        filters: Annotated[dict[str, Any] | None, Field(description=SAME_AS_SEARCH)] = None,
        text: Annotated[str | None, Field(description=SAME_AS_SEARCH)] = None,
        linked_to: Annotated[LinkedTo | None, Field(description=SAME_AS_SEARCH)] = None,
        group_by: Annotated[
            GroupBy | None,
            Field(
                description='{"field": [...], "bucket"?: "month" | "year" of ISO dates}, '
                '{"collection": true} or {"linked": {...}}; records without a key form a null '
                "group, flagged why."
            ),
        ] = None,
        metrics: Annotated[
            Metrics | None,
            Field(description='Default [{"op": "count"}]; sum, avg, min and max need a field.'),
        ] = None,
        limit: Annotated[int, Field(description="Groups returned.", ge=1, le=100)] = 50,
    ) -> ToolResult:
        """Count, sum, average, min or max active records on the server, optionally grouped.

        For totals such as spend per vendor, instead of paging search_records. Non-count
        metrics use numbers only and report `used`, `skipped_missing`, `skipped_non_numeric`:
        tell the user about skipped records. Groups come largest count first
        (`groups_truncated`: more exist); a record linked to several records counts in each
        linked group. Changes nothing.
        """
        return self._read(selectors.aggregate, locals())


class SessionTools(Toolset):
    def workspace_digest(self) -> ToolResult:
        """Summarise this workspace: call it first in a new conversation.

        Collections (ID, purpose, count, fields, link types), who 'me' is, open agendas, writes
        waiting on you or a person, the latest changes and how many are unread. Changes nothing.
        """
        agenda_tools = sdk.served_tool("agenda_view") is not None
        return self._run(lambda scope: workspace_digest(scope, agenda_tools=agenda_tools), {})

    def get_server_instructions(self) -> ToolResult:
        """Return the server's working rules, the same text clients receive at initialization.

        Call it only if your client did not show you the server instructions. Changes nothing.
        """
        return run_tool(lambda: {"instructions": current_instructions()})
