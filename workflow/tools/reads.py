"""Read tools: catalogue, record context, histories and search. None of them changes anything."""

from typing import Annotated, Any

from mcp_server import MCPToolset
from pydantic import Field

from records import selectors
from workflow.envelope import ToolResult, run_tool
from workflow.scope import scope_for_request

RecordId = Annotated[str, Field(description="A record ID (UUID) returned by another tool.")]
Limit = Annotated[int, Field(description="Items per page, 1-100 (default 20).", ge=1, le=100)]
Cursor = Annotated[
    str | None,
    Field(
        description="next_cursor from the previous page of this same call, unchanged. Omit for "
        "the first page. A cursor from other parameters is refused."
    ),
]


class ReadTools(MCPToolset):
    def list_collections(self) -> ToolResult:
        """List the collections in this workspace with IDs, descriptions and active counts.

        Use it to find a collection ID for search_records or aggregate. Before creating or
        renaming a collection use discover_collections instead: it also returns sample records
        and the review ID a write needs. Returns at most 1000 collections, by name, with a
        `truncated` flag; counts exclude archived records.
        """
        scope = scope_for_request(self.request)
        return run_tool(lambda: selectors.collection_list(workspace_id=scope.workspace_id))

    def get_record_context(
        self,
        record_id: RecordId,
        relationship_limit: Annotated[
            int,
            Field(description="Links returned per direction, 1-100 (default 20).", ge=1, le=100),
        ] = 20,
        event_limit: Annotated[
            int,
            Field(
                description="Most recent audit events, 0-100 (default 10); 0 omits history.",
                ge=0,
                le=100,
            ),
        ] = 10,
        as_of: Annotated[
            str | None,
            Field(
                description="ISO 8601 time (e.g. 2026-03-01T12:00:00Z; no offset means UTC) to "
                "read the record as it was then. Omit for the current state."
            ),
        ] = None,
    ) -> ToolResult:
        """Read one record in full: data, version, aliases, one-hop links and recent history.

        Use it after search_records or resolve_record to see everything about a record,
        including archived ones, and to get the current `version` a write needs. Links are
        capped per direction with `outgoing_truncated` / `incoming_truncated`; for multi-hop
        questions use traverse. Older events: get_record_history with `history_next_cursor`.
        `as_of` returns the stored version current at that time (NOT_FOUND if the record did
        not exist yet); links then exclude later ones but cannot show links removed since.
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
        self, record_id: RecordId, limit: Limit = 20, cursor: Cursor = None
    ) -> ToolResult:
        """Page through a record's audit trail, newest first.

        Shows each change with before/after state, actor, time, decision reason, review
        evidence and the agent-reported clarification (what the agent said the user told it;
        the server cannot verify it). Includes links made from this record; links made from
        the other end appear in that record's history. Times are when entries were made, not
        when events in the world happened. For the current state use get_record_context.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.record_history(
                workspace_id=scope.workspace_id, record_id=record_id, limit=limit, cursor=cursor
            )
        )

    def get_collection_history(
        self,
        collection_id: Annotated[
            str, Field(description="A collection ID (UUID) from list_collections.")
        ],
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Page through a collection's own audit trail (creation, edits, aliases), newest first.

        Events about records in the collection are not included; read those with
        get_record_history. Each event shows actor, time, before/after, decision reason and
        the agent-reported clarification, which the server cannot verify.
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
        collection_id: Annotated[
            str | None, Field(description="Only records in this collection (ID).")
        ] = None,
        query: Annotated[
            str | None,
            Field(
                description="Literal title substring, case-insensitive (Unicode casefold); % "
                "and _ are plain characters. Up to 300 characters."
            ),
        ] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description='Exact match on top-level data keys, ANDed: {"stage": "interview"}. '
                "Values compare as exact JSON: null differs from missing, 1 from 1.0, true "
                "from 1; strings are case-sensitive; nested objects compare in full."
            ),
        ] = None,
        limit: Limit = 20,
        cursor: Cursor = None,
        text: Annotated[
            str | None,
            Field(
                description="Full-text words to find in titles and data values (not key "
                "names). Every word must match as a prefix; case and accents are ignored; "
                "operators and punctuation are plain text. Up to 300 characters, first 16 "
                "words. Results come best match first with a match_snippet."
            ),
        ] = None,
        where: Annotated[
            list[dict[str, Any]] | None,
            Field(
                description='Typed conditions, ANDed: [{"field": ["offer", "ctc"], "op": '
                '"gte", "value": 30}]. op: eq ne gt gte lt lte between ([low, high]) in '
                "(list) contains (substring of a string, or element of an array) exists "
                '(true for null) missing. Types must match: 38 never matches "38"; true is '
                "not 1. ISO dates compare correctly as strings. Up to 20 conditions."
            ),
        ] = None,
        linked_to: Annotated[
            dict[str, Any] | None,
            Field(
                description='Only records linked to a record: {"record_id": "...", '
                '"relationship_types"?: ["applicant"], "direction"?: "outgoing" | "incoming" | '
                '"both"}. outgoing means the matched record is the link\'s source.'
            ),
        ] = None,
        order_by: Annotated[
            dict[str, Any] | None,
            Field(
                description='Sort by a data field: {"field": ["amount"], "type": "number" | '
                '"string", "direction"?: "asc" | "desc"}. Records lacking the field or holding '
                "another type are left out. Not with text."
            ),
        ] = None,
    ) -> ToolResult:
        """Search active records by title, exact fields, typed conditions, links or full text.

        Every given parameter must hold (AND). Returns a page of previews (data cut at 500
        characters, `data_truncated`) oldest first, best match first with `text`, or by
        `order_by`; follow `next_cursor` with the same parameters. Archived records are never
        returned; use resolve_record to find a record by name before writing, and
        get_record_context for full data. Zero results do not prove a record does not exist:
        it may be archived, spelled differently or stored elsewhere. For totals use aggregate.
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
