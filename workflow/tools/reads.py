"""Read tools: catalogue, record context, histories and search."""

from typing import Annotated

from mcp_server import MCPToolset
from pydantic import Field

from records import selectors
from workflow.envelope import ToolResult, run_tool
from workflow.scope import scope_for_request


class ReadTools(MCPToolset):
    def list_collections(self) -> ToolResult:
        """List every collection in this workspace: ID, name, purpose and active record count.

        Use it to find a collection ID for search_records. To decide whether a new collection
        is needed, use discover_collections instead (it also issues the review ID that
        creating one requires). Returns at most 1000 collections with a `truncated` flag.
        """
        scope = scope_for_request(self.request)
        return run_tool(lambda: selectors.collection_list(workspace_id=scope.workspace_id))

    def get_record_context(
        self,
        record_id: Annotated[str, Field(description="ID of the record to read (a UUID).")],
        relationship_limit: Annotated[
            int, Field(description="Links returned per direction, 1-100.", ge=1, le=100)
        ] = 20,
        event_limit: Annotated[
            int, Field(description="Recent audit events, 0-100; 0 omits history.", ge=0, le=100)
        ] = 10,
    ) -> ToolResult:
        """Read one record in full with its one-hop links and recent history."""
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: selectors.record_context(
                workspace_id=scope.workspace_id,
                record_id=record_id,
                relationship_limit=relationship_limit,
                event_limit=event_limit,
            )
        )
