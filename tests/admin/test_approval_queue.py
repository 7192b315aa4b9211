"""The approval queue: a person approves (applied once, with commit-time rechecks) or rejects
(the agent reads the reason on replay) an agent's write to a collection that needs approval."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records import services
from records.models import Record
from workflow.actions import commit_write, prepare_write
from workflow.models import ActionState, PreparedAction
from workflow.resolution import resolve_record
from workflow.scope import Scope

AGENT = Scope("local", "local-agent")


@pytest.fixture
def pending(hiring, ctx) -> PreparedAction:
    """The agent wants to update Kirat in `people`, which needs a person's approval."""
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    review = resolve_record(AGENT, query="Kirat", collection_id=hiring.people.pk)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={
            "record_id": hiring.kirat.pk,
            "changes": {"stage": "offer"},
            "expected_version": 1,
        },
        review_ids=[review["resolution_id"]],
        decision_reason="Priya and Rahul both recommend hiring Kirat.",
        clarification="The user said to move Kirat to the offer stage.",
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    return PreparedAction.objects.get(pk=prepared["action_id"])


def test_queue_lists_pending_actions_with_preview_reason_and_evidence(
    admin_client_as_maya, pending
):
    queue = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_changelist"), {"queue": "pending"}
    )
    assert pending in queue.context["cl"].result_list
    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[pending.pk])
    ).content.decode()
    assert "This write awaits your decision" in page
    assert "Priya and Rahul both recommend hiring Kirat." in page
    assert "agent-reported" in page and "offer stage" in page
    assert pending.evidence[0]["review_id"] in page


def test_approve_applies_once(admin_client_as_maya, hiring, pending):
    url = reverse("admin:workflow_preparedaction_approve", args=[pending.pk])
    assert admin_client_as_maya.post(url).status_code == 302
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert (kirat.version, kirat.data["stage"]) == (2, "offer")
    pending.refresh_from_db()
    assert (pending.state, pending.decided_by) == ("committed", "user:maya")

    again = admin_client_as_maya.post(url, follow=True)
    assert any("Not applied" in str(m) for m in again.context["messages"])
    assert Record.objects.get(pk=hiring.kirat.pk).version == 2
    replay = commit_write(AGENT, action_id=pending.pk)
    assert replay["status"] == "committed" and replay["replayed"] is True


def test_approve_is_refused_when_the_record_changed(admin_client_as_maya, hiring, pending, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    url = reverse("admin:workflow_preparedaction_approve", args=[pending.pk])
    response = admin_client_as_maya.post(url, follow=True)
    assert any("Not applied" in str(m) for m in response.context["messages"])
    assert Record.objects.get(pk=hiring.kirat.pk).data["stage"] == "withdrawn"
    pending.refresh_from_db()
    assert pending.state == ActionState.STALE


def test_reject_is_read_by_the_agent_on_replay(admin_client_as_maya, hiring, pending):
    url = reverse("admin:workflow_preparedaction_reject", args=[pending.pk])
    assert admin_client_as_maya.get(url).status_code == 200
    response = admin_client_as_maya.post(url, {"reason": "Offer waits for the debrief."})
    assert response.status_code == 302
    replay = commit_write(AGENT, action_id=pending.pk)
    assert (replay["status"], replay["reason"]) == ("rejected", "Offer waits for the debrief.")
    assert Record.objects.get(pk=hiring.kirat.pk).version == 1


def test_bulk_approve_action(admin_client_as_maya, hiring, pending):
    response = admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_changelist"),
        {"action": "approve_selected", "_selected_action": [pending.pk]},
    )
    assert response.status_code == 302
    assert Record.objects.get(pk=hiring.kirat.pk).data["stage"] == "offer"
