"""The original one-step write tools, kept listed so old clients learn the new workflow.

They never write: each answers REVIEW_REQUIRED with the steps that replace it.
"""

from mcp_server import MCPToolset

from records.errors import REVIEW_REQUIRED
from workflow.mcp.envelope import ToolResult

STEPS = {
    "create_collection": "discover_collections(name, purpose) → prepare_write(operation="
    "'create_collection', ...) → commit_write(action_id)",
    "create_record": "resolve_record(query=title, collection_id) → prepare_write(operation="
    "'create_record', ...) → commit_write(action_id)",
    "update_record": "resolve_record(name) → prepare_write(operation='update_record', "
    "arguments={record_id, changes, expected_version}) → commit_write(action_id)",
    "archive_record": "resolve_record(name) → prepare_write(operation='archive_record', "
    "arguments={record_id, expected_version}) → commit_write(action_id)",
    "link_records": "resolve_record for both records → prepare_write(operation="
    "'link_records', ...) → commit_write(action_id)",
    "unlink_records": "get_record_context to find the relationship_id, resolve_record for "
    "both ends → prepare_write(operation='unlink_records', ...) → commit_write(action_id)",
}


def _refuse(tool: str) -> ToolResult:
    return {
        "ok": False,
        "error": {
            "code": REVIEW_REQUIRED,
            "message": f"{tool} no longer writes directly; nothing was changed. Use: "
            f"{STEPS[tool]}.",
            "details": {"replacement": STEPS[tool]},
        },
    }


class LegacyWriteTools(MCPToolset):
    def create_collection(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use discover_collections, prepare_write and
        commit_write instead."""
        return _refuse("create_collection")

    def create_record(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use resolve_record, prepare_write and
        commit_write instead."""
        return _refuse("create_record")

    def update_record(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use resolve_record, prepare_write and
        commit_write instead."""
        return _refuse("update_record")

    def archive_record(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use resolve_record, prepare_write and
        commit_write instead."""
        return _refuse("archive_record")

    def link_records(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use resolve_record, prepare_write and
        commit_write instead."""
        return _refuse("link_records")

    def unlink_records(self) -> ToolResult:
        """Retired: always answers REVIEW_REQUIRED. Use resolve_record, prepare_write and
        commit_write instead."""
        return _refuse("unlink_records")
