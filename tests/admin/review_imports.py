"""Writes made the way an agent makes them, for the pages that show what was applied: a create,
and a referral import with a near-duplicate the agent creates anyway and links between rows
and to an existing opening."""

from __future__ import annotations

from typing import Any

from tests.admin.review_helpers import AGENT
from workflow.actions import commit_import, commit_write, prepare_import, prepare_write
from workflow.models import PreparedAction
from workflow.resolution import resolve_record

DIFFERENT_PERSON = "This Abhishek is a different person from ours: another email, another city."


def agent_create(collection_id: str, title: str, **data: Any) -> dict[str, Any]:
    """The agent finds no such record, then prepares and commits its creation."""
    review = resolve_record(AGENT, query=title, collection_id=collection_id)
    prepared = prepare_write(
        AGENT,
        operation="create_record",
        arguments={"collection_id": collection_id, "title": title, "data": data},
        review_ids=[review["resolution_id"]],
        decision_reason=f"{title} applied through the careers page.",
    )
    return commit_write(AGENT, action_id=prepared["action_id"])


def referral_import(hiring: Any) -> PreparedAction:
    """Three referrals, one close to Abhishek; two link to each other and one to Junior Backend.
    Committed with the agent's decision on the flagged row (held if the collection is gated)."""
    opening = resolve_record(AGENT, query="Junior Backend", collection_id=hiring.openings.pk)
    prepared = prepare_import(
        AGENT,
        collection_id=hiring.people.pk,
        rows=[
            {"key": "r1", "title": "Abhishek", "data": {"email": "abhisek@example.com"}},
            {"key": "r2", "title": "Meera Iyer", "data": {"email": "meera@example.com"}},
            {"key": "r3", "title": "Tobias Wren", "data": {"email": "tobias@example.com"}},
        ],
        links=[
            {"source": {"row": "r1"}, "relationship_type": "referred_by", "target": {"row": "r2"}},
            {
                "source": {"row": "r3"},
                "relationship_type": "interested_in",
                "target": {"record_id": hiring.backend.pk},
            },
        ],
        review_ids=[opening["resolution_id"]],
        decision_reason="Referrals from the meetup.",
    )
    flagged = [r["key"] for r in prepared["rows"] if r["status"] != "clean"]
    assert flagged == ["r1"], prepared["rows"]
    commit_import(
        AGENT,
        action_id=prepared["action_id"],
        decisions={"r1": {"decision": "create_anyway", "clarification": DIFFERENT_PERSON}},
    )
    return PreparedAction.objects.get(pk=prepared["action_id"])
