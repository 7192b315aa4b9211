"""Write tools: prepare the exact write, then commit it after the server's rechecks."""

from typing import Annotated, Any

from mcp_server import MCPToolset
from pydantic import Field

from workflow import actions
from workflow.envelope import ToolResult, run_tool
from workflow.scope import scope_for_request


class WriteTools(MCPToolset):
    def prepare_write(
        self,
        operation: Annotated[
            str,
            Field(
                description="One of: create_collection, update_collection, "
                "add_collection_alias, remove_collection_alias, create_record, update_record, "
                "archive_record, rename_record, add_record_alias, remove_record_alias, "
                "set_self, link_records, unlink_records."
            ),
        ],
        arguments: Annotated[
            dict[str, Any],
            Field(description="Exactly the keys the operation takes (see the description)."),
        ],
        review_ids: Annotated[
            list[str],
            Field(
                description="1-12 discovery_id / resolution_id values, fresh (under 15 "
                "minutes), that reviewed every name and record this write touches."
            ),
        ],
        decision_reason: Annotated[
            str, Field(description="Why this write, in a sentence (1-2000 chars); audited.")
        ],
        clarification: Annotated[
            str | None,
            Field(
                description="Only what the user actually said to settle an ambiguity, a "
                "possible duplicate or overlap, an alias or a self mapping. Audited as "
                "agent-reported, never as consent. Omit when nothing needed settling."
            ),
        ] = None,
    ) -> ToolResult:
        """Validate an exact write against your reviews and preview it; nothing is changed yet.

        Argument keys per operation:
        create_collection / update_collection: name, purpose, record_meaning, typical_fields
        (1-20 names), relationship_guidance (+ collection_id for update); cite a discovery.
        add_collection_alias / remove_collection_alias: collection_id, alias.
        create_record: collection_id, title, data (JSON object, 16 KiB); cite a resolution of
        the title in that collection (no context_record_ids).
        update_record: record_id, changes (top-level keys merged; null is stored),
        expected_version. archive_record: record_id, expected_version. rename_record:
        record_id, title, expected_version (also resolve the new title). add_record_alias /
        remove_record_alias: record_id, alias, expected_version. set_self: record_id,
        expected_version. link_records: source_id, relationship_type, target_id (resolve both).
        unlink_records: relationship_id (resolve both ends).
        Errors: REVIEW_REQUIRED (cite a fitting review), NEEDS_CLARIFICATION (ask the user),
        STALE_REVIEW (review again), INCOMPLETE_REVIEW, VERSION_CONFLICT, ARCHIVED.
        Returns `action_id` and a preview; then call commit_write. Preview IDs are provisional.
        """
        scope = scope_for_request(self.request)
        return run_tool(
            lambda: actions.prepare_write(
                scope,
                operation=operation,
                arguments=arguments,
                review_ids=review_ids,
                decision_reason=decision_reason,
                clarification=clarification,
            )
        )

    def commit_write(
        self,
        action_id: Annotated[str, Field(description="The action_id returned by prepare_write.")],
    ) -> ToolResult:
        """Apply a prepared write atomically after rechecking its reviews and versions.

        `status` is `committed` (with the result), `awaiting_approval` (a person must approve
        in the admin; call again later with the same action_id to read the decision) or
        `rejected`. Safe to retry: a committed action_id returns its stored original result
        (`replayed: true`) without writing again, also after a restart. A changed or expired
        action returns STALE_REVIEW: read current state, review again, prepare anew; never
        just substitute a fresh version number.
        """
        scope = scope_for_request(self.request)
        return run_tool(lambda: actions.commit_write(scope, action_id=action_id))
