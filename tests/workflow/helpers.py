"""Helpers for workflow tests: tool calls that must succeed, and whole-store snapshots."""

from __future__ import annotations

from typing import Any

from records.models import (
    AuditEvent,
    Collection,
    CollectionAlias,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
    RevisionCounter,
    SelfMapping,
)
from tests.mcp_client import call_tool


def ok(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    envelope = call_tool(name, arguments)
    assert envelope["ok"], f"{name} refused: {envelope.get('error')}"
    return envelope["result"]


def refused(name: str, arguments: dict[str, Any], code: str) -> dict[str, Any]:
    envelope = call_tool(name, arguments)
    assert not envelope["ok"], f"{name} should have been refused with {code}: {envelope}"
    assert envelope["error"]["code"] == code, envelope["error"]
    return envelope["error"]


def store_snapshot() -> dict[str, Any]:
    """Everything a write could touch: row counts, record states, counter values."""
    models = [
        Collection,
        CollectionAlias,
        Record,
        RecordAlias,
        RecordVersion,
        Relationship,
        AuditEvent,
        SelfMapping,
    ]
    snapshot: dict[str, Any] = {m.__name__: m._default_manager.count() for m in models}
    snapshot["records"] = sorted(
        Record.objects.values_list("id", "title", "version", "archived_at")
    )
    snapshot["counters"] = sorted(
        RevisionCounter.objects.values_list("workspace_id", "key", "value")
    )
    return snapshot


def write(
    operation: str,
    arguments: dict[str, Any],
    review_ids: list[str],
    *,
    clarification: str | None = None,
    reason: str = "the user asked",
) -> dict[str, Any]:
    """prepare_write then commit_write; returns the commit result."""
    params: dict[str, Any] = {
        "operation": operation,
        "arguments": arguments,
        "review_ids": review_ids,
        "decision_reason": reason,
    }
    if clarification is not None:
        params["clarification"] = clarification
    prepared = ok("prepare_write", params)
    return ok("commit_write", {"action_id": prepared["action_id"]})
