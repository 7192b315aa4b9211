"""Read tools: catalog, record context, histories and search. None of them changes anything."""

from typing import Annotated, Any, Literal

from mcp_server import MCPToolset
from pydantic import Field

from records import selectors
from workflow.mcp.envelope import ToolResult, run_tool
from workflow.mcp.shapes import Conditions, GroupBy, LinkedTo, Metrics, OrderBy
from workflow.scope import scope_for_request

RecordId = Annotated[str, Field(description="Record ID (UUID).")]
Limit = Annotated[int, Field(description="Page size, 1-100.", ge=1, le=100)]
Cursor = Annotated[
    str | None,
    Field(description="next_cursor of the previous page, with the same other arguments."),
]
SAME_AS_SEARCH = "As in search_records."


class ReadTools(MCPToolset):
    def list_collections(self) -> ToolResult:
        """List this workspace's collections: IDs, descriptions, active record counts.

        For collection IDs to search or aggregate. Before creating a collection use
        discover_collections (it issues the review ID a write needs). Max 1000, `truncated`.
        """
        scope = scope_for_request(self.request)
        return run_tool(lambda: selectors.collection_list(workspace_id=scope.workspace_id))

    def get_record_context(
        self,
        record_id: RecordId,
        relationship_limit: Annotated[
            int, Field(description="Links per direction, 1-100.", ge=1, le=100)
        ] = 20,
        event_limit: Annotated[
            int, Field(description="Recent audit events, 0-100; 0 omits history.", ge=0, le=100)
        ] = 10,
        as_of: Annotated[
            str | None,
            Field(description="ISO 8601 time (UTC if no offset): read the record as it was."),
        ] = None,
    ) -> ToolResult:
        """Read one record in full: data, version, aliases, one-hop links, recent history.

        Works on archived records too; gives the `version` writes need. Links are capped per
        direction (`*_truncated`); for several hops use traverse, for older events
        get_record_history with `history_next_cursor`. `as_of`: the version then (NOT_FOUND
        before creation); links removed since are not shown.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.record_context(
                workspace_id=scope.workspace_id,
                record_id=record_id,
                relationship_limit=relationship_limit,
                event_limit=event_limit,
                as_of=as_of,
            )
        )

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

        Each change: before/after, actor, time, decision reason, evidence, and the
        agent-reported clarification (unverified, not user consent). Links appear in their
        source record's history. Times are entry times, not when things happened.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.record_history(
                workspace_id=scope.workspace_id,
                record_id=record_id,
                limit=limit,
                cursor=cursor,
                as_of=as_of,
            )
        )

    def get_collection_history(
        self,
        collection_id: Annotated[str, Field(description="Collection ID (UUID).")],
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Page through a collection's own audit trail (creation, edits, aliases), newest first.

        Record events are not included (get_record_history). Clarifications are
        agent-reported and unverified.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.collection_history(
                workspace_id=scope.workspace_id,
                collection_id=collection_id,
                limit=limit,
                cursor=cursor,
            )
        )

    def search_records(
        self,
        collection_id: Annotated[str | None, Field(description="Collection ID.")] = None,
        query: Annotated[
            str | None,
            Field(description="Title substring, case-insensitive; % and _ are literal."),
        ] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description='Exact top-level values, e.g. {"stage": "interview"}: null is not '
                "missing, 1 is not 1.0 or true."
            ),
        ] = None,
        limit: Limit = 20,
        cursor: Cursor = None,
        text: Annotated[
            str | None,
            Field(
                description="Words in titles or values (not keys); each a prefix, accents "
                "and case ignored. Best match first, with match_snippet."
            ),
        ] = None,
        where: Annotated[
            Conditions | None,
            Field(
                description='All must hold, e.g. [{"field": ["offer", "ctc"], "op": "gte", '
                '"value": 30}]; between takes [low, high], in a list of up to 100, exists and '
                'missing no value. Typed: 38 is not "38".'
            ),
        ] = None,
        linked_to: Annotated[
            LinkedTo | None,
            Field(
                description="Only records linked to this one; outgoing: the match is the source."
            ),
        ] = None,
        order_by: Annotated[
            OrderBy | None,
            Field(description="Sort by a data field; records without that type are left out."),
        ] = None,
    ) -> ToolResult:
        """Search active records by title, exact fields, typed conditions, links or full text.

        All given arguments must hold. Pages of previews (data cut at 500 chars), oldest
        first unless text or order_by; follow next_cursor. Archived records are never returned.
        Zero results do not prove absence (archived, spelled differently): use resolve_record
        before writing, get_record_context for full data, aggregate for totals.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.search_records(
                workspace_id=scope.workspace_id,
                collection_id=collection_id,
                query=query,
                filters=filters,
                limit=limit,
                cursor=cursor,
                text=text,
                where=where,
                linked_to=linked_to,
                order_by=order_by,
            )
        )

    def traverse(
        self,
        start_record_id: RecordId,
        max_depth: Annotated[int, Field(description="Hops, 1-4.", ge=1, le=4)] = 2,
        direction: Annotated[
            Literal["outgoing", "incoming", "both"], Field(description="Links to follow.")
        ] = "both",
        relationship_types: Annotated[
            list[str] | None, Field(description="Follow only these link types.")
        ] = None,
        collection_id: Annotated[
            str | None,
            Field(description="Return only this collection's records; others are walked."),
        ] = None,
        max_nodes: Annotated[int, Field(description="Records to reach, 1-200.", ge=1, le=200)] = 50,
    ) -> ToolResult:
        """Walk links from one record over several hops in one call.

        For chains like person -> applications -> interviews -> feedback. Each reached record
        once, with depth and shortest path; walked `edges` (max 500); archived ones flagged.
        `truncated`: a limit was hit, so more may exist. Only explicit links are followed.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.traverse(
                workspace_id=scope.workspace_id,
                start_record_id=start_record_id,
                max_depth=max_depth,
                direction=direction,
                relationship_types=relationship_types,
                collection_id=collection_id,
                max_nodes=max_nodes,
            )
        )

    def aggregate(
        self,
        collection_id: Annotated[str | None, Field(description="Collection ID.")] = None,
        where: Annotated[Conditions | None, Field(description=SAME_AS_SEARCH)] = None,
        filters: Annotated[dict[str, Any] | None, Field(description=SAME_AS_SEARCH)] = None,
        text: Annotated[str | None, Field(description=SAME_AS_SEARCH)] = None,
        linked_to: Annotated[LinkedTo | None, Field(description=SAME_AS_SEARCH)] = None,
        group_by: Annotated[
            GroupBy | None,
            Field(description="By a data field (dates by month or year), collection or link."),
        ] = None,
        metrics: Annotated[
            Metrics | None,
            Field(description='Default [{"op": "count"}]; sum, avg, min and max need a field.'),
        ] = None,
        limit: Annotated[int, Field(description="Groups, 1-100.", ge=1, le=100)] = 50,
    ) -> ToolResult:
        """Count, sum, average, min or max active records on the server, optionally grouped.

        For totals such as spend per vendor, instead of paging search_records. Non-count
        metrics use numbers only and report `used`, `skipped_missing`, `skipped_non_numeric`:
        tell the user about skipped records. Linked groups can add up to more than `matched`.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.aggregate(
                workspace_id=scope.workspace_id,
                collection_id=collection_id,
                where=where,
                filters=filters,
                text=text,
                linked_to=linked_to,
                group_by=group_by,
                metrics=metrics,
                limit=limit,
            )
        )
