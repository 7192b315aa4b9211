"""A person's decision on a held write is an audit event on what it touches, the agent reads
who decided and why on replay, and a write that can no longer apply is marked stale at once,
with the reason in plain words."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records import services
from records.errors import STALE_REVIEW, AnchorError
from records.models import AuditEvent, Record
from tests.admin.review_helpers import AGENT, gate, held_update
from workflow.actions import approve_prepared_action, commit_write, prepare_write
from workflow.models import ActionState, PreparedAction
from workflow.resolution import resolve_record


@pytest.fixture
def gated(hiring, ctx):
    gate(ctx, hiring.people)
    return hiring


def test_approval_is_an_audit_event_on_the_record_and_the_agent_reads_it(
    admin_client_as_maya, gated
):
    held = held_update(gated.kirat, {"stage": "offer"})
    url = reverse("admin:workflow_preparedaction_approve", args=[held.pk])
    assert admin_client_as_maya.post(url, {"note": "Debrief went well."}).status_code == 302

    event = AuditEvent.objects.get(kind="action.approved", record_id=gated.kirat.pk)
    assert (event.actor_id, event.decision_reason, event.action_id) == (
        "user:maya",
        "Debrief went well.",
        held.pk,
    )
    assert event.after and event.after["decided_by"] == "user:maya"
    assert event.before and event.before["prepared_by"] == "local-agent"

    page = admin_client_as_maya.get(
        reverse("admin:records_record_change", args=[gated.kirat.pk])
    ).content.decode()
    assert "approved by user:maya" in page
    assert "Agent&#x27;s write approved" in page

    replay = commit_write(AGENT, action_id=held.pk)
    assert (replay["status"], replay["approved_by"], replay["approval_note"]) == (
        "committed",
        "user:maya",
        "Debrief went well.",
    )


def test_rejection_is_an_audit_event_on_the_record_and_the_agent_reads_why(
    admin_client_as_maya, gated
):
    held = held_update(gated.kirat, {"stage": "offer"})
    url = reverse("admin:workflow_preparedaction_reject", args=[held.pk])
    admin_client_as_maya.post(url, {"reason": "Wait for the debrief."})

    event = AuditEvent.objects.get(kind="action.rejected", record_id=gated.kirat.pk)
    assert (event.actor_id, event.decision_reason) == ("user:maya", "Wait for the debrief.")
    assert Record.objects.get(pk=gated.kirat.pk).version == 1  # nothing else was written
    page = admin_client_as_maya.get(
        reverse("admin:records_record_change", args=[gated.kirat.pk])
    ).content.decode()
    assert "rejected by user:maya" in page

    replay = commit_write(AGENT, action_id=held.pk)
    assert (replay["status"], replay["rejected_by"], replay["reason"]) == (
        "rejected",
        "user:maya",
        "Wait for the debrief.",
    )
    assert replay["rejected_at"]


def test_no_decision_no_event(gated):
    held_update(gated.kirat, {"stage": "offer"})
    assert not AuditEvent.objects.filter(kind__startswith="action.").exists()


def test_a_write_made_stale_by_an_approval_is_marked_stale_at_once_with_the_reason(
    admin_client_as_maya, gated
):
    first = held_update(gated.kirat, {"stage": "offer"})
    second = held_update(gated.kirat, {"stage": "rejected"})  # also prepared against version 1

    approve_prepared_action(action_id=first.pk, reviewer="user:maya")

    second.refresh_from_db()
    assert second.state == ActionState.STALE  # before anyone pressed Approve on it
    assert "“Kirat” changed after the agent prepared this write" in second.stale_reason
    assert "now at version 2" in second.stale_reason and "by user:maya" in second.stale_reason

    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[second.pk])
    ).content.decode()
    assert "This write went stale" in page and "“Kirat” changed" in page
    assert "This write awaits your decision" not in page

    with pytest.raises(AnchorError) as refused:
        commit_write(AGENT, action_id=second.pk)
    assert refused.value.code == STALE_REVIEW
    assert second.stale_reason in refused.value.message
    assert refused.value.details["stale_reason"] == second.stale_reason


def test_a_write_made_stale_by_an_agent_commit_is_marked_stale_once_that_commit_lands(
    gated, ctx, django_capture_on_commit_callbacks
):
    held = held_update(gated.kirat, {"stage": "offer"})
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=gated.people.pk, requires_approval=False
    )
    with django_capture_on_commit_callbacks(execute=True):
        held_now = Record.objects.get(pk=gated.kirat.pk)
        review = resolve_record(AGENT, query="Kirat", collection_id=gated.people.pk)
        prepared = prepare_write(
            AGENT,
            operation="update_record",
            arguments={
                "record_id": held_now.pk,
                "changes": {"stage": "withdrawn"},
                "expected_version": held_now.version,
            },
            review_ids=[review["resolution_id"]],
            decision_reason="He withdrew.",
        )
        assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "committed"
    held.refresh_from_db()
    assert held.state == ActionState.STALE
    assert "“Kirat” changed" in held.stale_reason


def test_opening_a_pending_write_finds_it_stale_when_a_person_edited_the_record(
    admin_client_as_maya, gated, ctx
):
    held = held_update(gated.kirat, {"stage": "offer"})
    services.record_update(
        ctx=ctx, record_id=gated.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[held.pk])
    ).content.decode()
    held.refresh_from_db()
    assert held.state == ActionState.STALE
    assert "This write went stale" in page and "Applying it would overwrite" in page


def test_refused_approval_says_why_in_plain_words(admin_client_as_maya, gated, ctx):
    held = held_update(gated.kirat, {"stage": "offer"})
    services.record_update(
        ctx=ctx, record_id=gated.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    url = reverse("admin:workflow_preparedaction_approve", args=[held.pk])
    response = admin_client_as_maya.post(url, follow=True)
    said = " ".join(str(m) for m in response.context["messages"])
    assert "Not applied, nothing was written" in said and "“Kirat” changed" in said
    assert "get_record_context" not in said  # the agent's instructions are not for people


def test_bulk_approval_applies_independent_writes(admin_client_as_maya, gated):
    kirat = held_update(gated.kirat, {"stage": "offer"})
    abhishek = held_update(gated.abhishek, {"stage": "onsite"})
    response = admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_changelist"),
        {"action": "approve_selected", "_selected_action": [kirat.pk, abhishek.pk]},
    )
    assert response.status_code == 302
    assert Record.objects.get(pk=gated.kirat.pk).data["stage"] == "offer"
    assert Record.objects.get(pk=gated.abhishek.pk).data["stage"] == "onsite"
    states = set(PreparedAction.objects.values_list("state", flat=True))
    assert states == {ActionState.COMMITTED}
    assert AuditEvent.objects.filter(kind="action.approved").count() == 2


def test_bulk_approval_reports_the_one_an_earlier_approval_made_stale(admin_client_as_maya, gated):
    first = held_update(gated.kirat, {"stage": "offer"})
    second = held_update(gated.kirat, {"stage": "rejected"})
    response = admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_changelist"),
        {"action": "approve_selected", "_selected_action": [first.pk, second.pk]},
        follow=True,
    )
    said = [str(m) for m in response.context["messages"]]
    assert any("Approved and applied" in m for m in said)
    assert any("“Kirat” changed after the agent prepared this write" in m for m in said)
    assert Record.objects.get(pk=gated.kirat.pk).data["stage"] == "offer"
