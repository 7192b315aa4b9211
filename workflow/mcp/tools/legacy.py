"""The original one-step write tools, kept listed so old clients learn the new workflow.

They never write: each answers REVIEW_REQUIRED with the calls that replace it. The tool's
description and its refusal are built from the same STEPS entry, so they cannot disagree.
"""

from collections.abc import Callable

from records.errors import REVIEW_REQUIRED
from workflow.mcp.envelope import ToolResult
from workflow.mcp.tools.base import Toolset

NEVER_WRITES = "Retired; never writes: every call answers REVIEW_REQUIRED and changes nothing."
STEPS = {
    "create_collection": "discover_collections(name, purpose) → prepare_write(operation="
    '"create_collection", arguments={name, purpose, record_meaning, typical_fields, '
    "relationship_guidance}, review_ids=[discovery_id], decision_reason) → "
    "commit_write(action_id)",
    "create_record": "resolve_record(query=title, collection_id) → prepare_write(operation="
    '"create_record", arguments={collection_id, title, data}, review_ids=[resolution_id], '
    "decision_reason) → commit_write(action_id)",
    "update_record": 'resolve_record(query=name) → prepare_write(operation="update_record", '
    "arguments={record_id, changes, expected_version}, review_ids=[resolution_id], "
    "decision_reason) → commit_write(action_id)",
    "archive_record": 'resolve_record(query=name) → prepare_write(operation="archive_record", '
    "arguments={record_id, expected_version}, review_ids=[resolution_id], decision_reason) → "
    "commit_write(action_id)",
    "link_records": "resolve_record for each record → prepare_write(operation="
    '"link_records", arguments={source_id, relationship_type, target_id}, review_ids=[both '
    "resolution_ids], decision_reason) → commit_write(action_id)",
    "unlink_records": "get_record_context(record_id) for the relationship_id, resolve_record "
    'for both ends → prepare_write(operation="unlink_records", arguments={relationship_id}, '
    "review_ids=[both resolution_ids], decision_reason) → commit_write(action_id)",
}


def description(tool: str) -> str:
    return f"{NEVER_WRITES} Use {STEPS[tool]}."


def _refuse(tool: str) -> ToolResult:
    return {
        "ok": False,
        "error": {
            "code": REVIEW_REQUIRED,
            "message": f"{tool} is retired and never writes; nothing was changed. Use "
            f"{STEPS[tool]}.",
            "details": {"replacement": STEPS[tool]},
        },
    }


def _retired(method: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
    """The tool's description, from the same steps its refusal gives."""
    method.__doc__ = description(method.__name__)
    return method


class LegacyWriteTools(Toolset):
    @_retired
    def create_collection(self) -> ToolResult:
        return _refuse("create_collection")

    @_retired
    def create_record(self) -> ToolResult:
        return _refuse("create_record")

    @_retired
    def update_record(self) -> ToolResult:
        return _refuse("update_record")

    @_retired
    def archive_record(self) -> ToolResult:
        return _refuse("archive_record")

    @_retired
    def link_records(self) -> ToolResult:
        return _refuse("link_records")

    @_retired
    def unlink_records(self) -> ToolResult:
        return _refuse("unlink_records")
