"""Agent writes held for a person: the shared setup of the review tests."""

from __future__ import annotations

from typing import Any

from records import services
from records.models import Collection, Record
from records.services import WriteContext
from workflow.actions import commit_write, prepare_write
from workflow.models import PreparedAction
from workflow.resolution import resolve_record
from workflow.scope import Scope

AGENT = Scope("local", "local-agent")


def gate(ctx: WriteContext, collection: Collection) -> None:
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=collection.pk, requires_approval=True
    )


def held_update(
    record: Record, changes: dict[str, Any], reason: str = "The panel agreed.", **extra: Any
) -> PreparedAction:
    """The agent looks the record up, prepares an update and commits it: held for a person."""
    record = Record.objects.get(pk=record.pk)
    review = resolve_record(AGENT, query=record.title, collection_id=record.collection_id)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={"record_id": record.pk, "changes": changes, "expected_version": record.version},
        review_ids=[review["resolution_id"]],
        decision_reason=reason,
        **extra,
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    return PreparedAction.objects.get(pk=prepared["action_id"])
