"""Review tools: discover collections and resolve record names before any write."""

from typing import Annotated, Any

from pydantic import Field

from records.errors import AnchorError
from workflow.batch_read import batch_read
from workflow.discovery import discover_collections as discover
from workflow.mcp import tool_list
from workflow.mcp.calls import checker_for
from workflow.mcp.envelope import ToolResult
from workflow.mcp.shapes import ReadRequest, ResolveRequest, batch_of
from workflow.mcp.tools.base import Toolset
from workflow.next_steps import after_batch_resolution, after_discovery, after_resolution
from workflow.resolution import batch_resolve
from workflow.resolution import resolve_record as resolve
from workflow.scope import Scope


class ReviewTools(Toolset):
    def discover_collections(
        self,
        name: Annotated[
            str,
            Field(description="Proposed collection name or alias, e.g. 'expenses'."),
        ],
        purpose: Annotated[
            str,
            Field(description="What the collection would track, in a sentence."),
        ],
    ) -> ToolResult:
        """Review the whole collection catalog before creating, changing or aliasing a collection.

        Returns every collection with purpose, fields and samples, lexical `suggestions`, and a
        `discovery_id` to cite in prepare_write. Read every entry (collections can overlap in
        meaning without sharing words) and reuse one that fits. Changes nothing.
        """
        return self._run(discover, locals(), after_discovery)

    def resolve_record(
        self,
        query: Annotated[
            str,
            Field(description="The name, alias or record ID the user mentioned, or 'me'."),
        ],
        collection_id: Annotated[
            str | None,
            Field(description="Only look in this collection."),
        ] = None,
        context_record_ids: Annotated[
            list[str] | None,
            Field(
                description="Record IDs the user's words tie it to (\"Kirat's interview\"): "
                "only records linked to all of them are kept. Omit before a create."
            ),
        ] = None,
        ask_user: Annotated[
            bool,
            Field(
                description="On needs_clarification, ask the user in the client's own dialog "
                "(recorded as user-confirmed; `client_question` gives the answer). Never for "
                "secrets."
            ),
        ] = False,
        detail: Annotated[
            bool, Field(description="The whole answer: every candidate, the request echoed.")
        ] = False,
    ) -> ToolResult:
        """Find which stored record a name refers to, without guessing; required before writes.

        Matches exact titles, aliases and IDs; similar spellings are only suggestions. `status`:
        `resolved` (one active exact match), `needs_clarification` (ask the user one question
        from the candidates), `no_match` (expected before a create) or `incomplete` (narrow
        it). Returns a `resolution_id` to cite in a write (15 minutes). Before a create,
        resolve the title with its collection_id. Changes nothing.
        """
        # ask_user is acted on after this reply, by workflow.mcp.elicitation (it awaits the
        # client, which a tool method on the worker thread must not).
        name: dict[str, Any] = {"query": query, "collection_id": collection_id}
        name["context_record_ids"] = context_record_ids
        return self._run(resolve, name, lambda result: after_resolution(result, detail=detail))


class BatchReviewTools(Toolset):
    def batch_resolve_records(
        self,
        requests: batch_of(ResolveRequest, "1-10 items, each as for resolve_record."),  # type: ignore[valid-type]
    ) -> ToolResult:
        """Resolve several names in one call, each as resolve_record with its own resolution_id.

        An item that fails reports its own error without failing the others. Changes nothing.
        """
        # Items' ask_user is acted on after this reply, as resolve_record's is.
        names = [{k: v for k, v in item.items() if k != "ask_user"} for item in requests]
        return self._run(batch_resolve, {"requests": names}, after_batch_resolution)


class BatchReadTools(Toolset):
    def batch_read(
        self,
        requests: batch_of(  # type: ignore[valid-type]
            ReadRequest,
            "1-10 items: `operation` plus that tool's own arguments. A search may add "
            '"include_context": true: each result whole, its links in contexts. Limits (search '
            "limit, traverse max_nodes ≤100, 1 per other item) share a budget of 100.",
        ),
    ) -> ToolResult:
        """Run several reads in one call against one consistent snapshot of the store.

        Prefer it to several separate read calls, e.g. three searches with include_context
        for a report. Items come back in order, each its `result` or `error` and, for
        searches, its own next_cursor (follow it; a page is not a total). Contexts
        here default to event_limit 0 (history marked omitted, not empty). A batch over the
        budget or over 2 MB of answer is refused whole with sizes to split by. Changes nothing
        and issues no review IDs: resolve_record before writing.
        """
        return self._run(read_checked, locals())


def read_checked(scope: Scope, requests: list[ReadRequest]) -> dict[str, Any]:
    """Each item's arguments checked exactly as its own tool checks them (served or not),
    before any read; a refusal names the item (`requests[2].where[0].op`)."""
    for index, item in enumerate(requests):
        arguments = {k: v for k, v in item.items() if k not in ("operation", "include_context")}
        try:  # the schema allows only the names of registered read tools
            checker_for(tool_list.registered(item["operation"])).check(arguments)
        except AnchorError as exc:
            field = f"requests[{index}].{exc.details.get('field', 'arguments')}"
            details = {**exc.details, "field": field}
            raise AnchorError(exc.code, f"requests[{index}]: {exc.message}", **details) from None
    return batch_read(scope, requests=requests)
