"""A held write whose lookup the user settled in the client's own dialog."""

from __future__ import annotations

from records.models import Record
from tests.admin.review_helpers import AGENT
from workflow import client_confirmation
from workflow.actions import commit_write, prepare_write
from workflow.models import PreparedAction
from workflow.resolution import resolve_record

CLIENT = {"name": "dialog-client", "version": "7.1"}


def held_after_asking(record: Record, changes: dict[str, str]) -> PreparedAction:
    """The agent looks up an ambiguous title, asks the user in the client which one, and
    prepares an update of the record the user picked: held for a person."""
    review = resolve_record(AGENT, query=record.title, collection_id=record.collection_id)
    assert review["status"] == "needs_clarification"
    question = client_confirmation.resolution_question(AGENT, review["resolution_id"])
    assert question is not None
    client_confirmation.confirm_resolution(AGENT, question, choice=record.pk, client=CLIENT)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={"record_id": record.pk, "changes": changes, "expected_version": record.version},
        review_ids=[review["resolution_id"]],
        decision_reason="The user picked the backend Rahul.",
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    return PreparedAction.objects.get(pk=prepared["action_id"])
