"""Stale writes stay in sight until a person dismisses them, with the reason and whom they came
from; "Expires" says what actually expires."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from records import services
from records.errors import AnchorError
from tests.admin.review_helpers import AGENT, gate, held_update
from workflow.actions import commit_write, mark_stale_pending, prepare_write
from workflow.models import ActionState, PreparedAction
from workflow.resolution import resolve_record


def stale_write(hiring, ctx) -> PreparedAction:
    """A held update of Kirat's stage, made stale by a later change of the same record."""
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"}, reason="The hiring manager said offer.")
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    mark_stale_pending(held.workspace_id)  # as the sweep after a write, or opening the queue
    held.refresh_from_db()
    assert held.state == ActionState.STALE
    return held


def page(client, name: str, *args: str) -> str:
    response = client.get(reverse(name, args=list(args)))
    assert response.status_code == 200
    return response.content.decode()


def test_a_stale_write_stays_on_the_dashboard_with_its_reason(admin_client_as_maya, hiring, ctx):
    held = stale_write(hiring, ctx)
    index = page(admin_client_as_maya, "admin:index")
    start = index.index('id="dashboard-attention"')
    part = index[start : index.index("</div>\n</div>", start)]
    assert "(1)" in part and "update Kirat" in part and "from local-agent" in part
    assert "“Kirat” changed" in part
    assert reverse("admin:workflow_preparedaction_dismiss", args=[held.pk]) in part
    record = page(admin_client_as_maya, "admin:records_record_change", hiring.kirat.pk)
    assert 'id="attention-writes"' in record and "“Kirat” changed" in record


def test_dismissing_takes_it_off_the_lists_and_says_who(admin_client_as_maya, hiring, ctx):
    held = stale_write(hiring, ctx)
    response = admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_dismiss", args=[held.pk]),
        {"next": reverse("admin:index")},
    )
    assert response.status_code == 302 and response["Location"] == reverse("admin:index")
    held.refresh_from_db()
    assert held.dismissed_by == "user:maya" and held.dismissed_at is not None
    index = page(admin_client_as_maya, "admin:index")
    assert "Nothing went stale unseen." in index
    record = page(admin_client_as_maya, "admin:records_record_change", hiring.kirat.pk)
    assert 'id="attention-writes"' not in record
    action = page(admin_client_as_maya, "admin:workflow_preparedaction_change", held.pk)
    assert "Dismissed by <strong>user:maya</strong>" in action


def test_only_a_stale_write_can_be_dismissed(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"})
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_dismiss", args=[held.pk]))
    held.refresh_from_db()
    assert held.state == ActionState.AWAITING_APPROVAL and held.dismissed_at is None


def test_another_teams_stale_write_cannot_be_dismissed(client, teams):
    alpha, bravo = teams
    PreparedAction.objects.filter(pk=bravo.pending.pk).update(
        state=ActionState.STALE, stale_reason="bravo changed"
    )
    client.force_login(alpha.staff)
    url = reverse("admin:workflow_preparedaction_dismiss", args=[bravo.pending.pk])
    assert client.post(url).status_code == 404
    assert PreparedAction.objects.get(pk=bravo.pending.pk).dismissed_at is None
    assert "bravo changed" not in client.get(reverse("admin:index")).content.decode()


def test_expires_says_what_expires(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"})
    waiting = page(admin_client_as_maya, "admin:workflow_preparedaction_change", held.pk)
    assert "Does not expire while it awaits a person" in waiting
    review = resolve_record(AGENT, query="Abhishek", collection_id=hiring.people.pk)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={"record_id": hiring.abhishek.pk, "changes": {"x": 1}, "expected_version": 1},
        review_ids=[review["resolution_id"]],
        decision_reason="Not yet committed.",
    )
    fresh = page(
        admin_client_as_maya, "admin:workflow_preparedaction_change", prepared["action_id"]
    )
    assert "The agent must commit it by" in fresh
    PreparedAction.objects.filter(pk=prepared["action_id"]).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    late = page(admin_client_as_maya, "admin:workflow_preparedaction_change", prepared["action_id"])
    assert "Expired at" in late and "must prepare again" in late


def test_the_edit_form_says_which_pending_writes_a_save_makes_stale(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    update = held_update(hiring.kirat, {"stage": "offer"})
    review = resolve_record(AGENT, query="Kirat", collection_id=hiring.people.pk)
    opening = resolve_record(AGENT, query="Junior Backend", collection_id=hiring.openings.pk)
    link = prepare_write(
        AGENT,
        operation="link_records",
        arguments={
            "source_id": hiring.kirat.pk,
            "relationship_type": "interested_in",
            "target_id": hiring.backend.pk,
        },
        review_ids=[review["resolution_id"], opening["resolution_id"]],
        decision_reason="He asked about the backend role.",
    )
    assert commit_write(AGENT, action_id=link["action_id"])["status"] == "awaiting_approval"
    url = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    form = admin_client_as_maya.get(url, {"edit": "1"}).content.decode()
    start = form.index('id="pending-on-edit"')
    part = form[start : form.index("</ul>", start)]
    update_url = reverse("admin:workflow_preparedaction_change", args=[update.pk])
    link_url = reverse("admin:workflow_preparedaction_change", args=[link["action_id"]])
    assert "stale only if you change stage" in part[part.index(update_url) :].split("</li>")[0]
    assert "stays applicable" in part[part.index(link_url) :].split("</li>")[0]
    # What it said holds: an email change leaves both; a stage change stales the update only.
    services.record_update(
        ctx=ctx,
        record_id=hiring.kirat.pk,
        changes={"email": "k@new.example.com"},
        expected_version=1,
    )
    mark_stale_pending(update.workspace_id)
    assert PreparedAction.objects.get(pk=update.pk).state == ActionState.AWAITING_APPROVAL
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "withdrawn"}, expected_version=2
    )
    mark_stale_pending(update.workspace_id)
    assert PreparedAction.objects.get(pk=update.pk).state == ActionState.STALE
    assert PreparedAction.objects.get(pk=link["action_id"]).state == ActionState.AWAITING_APPROVAL
    other = admin_client_as_maya.get(
        reverse("admin:records_record_change", args=[hiring.abhishek.pk]), {"edit": "1"}
    )
    assert 'id="pending-on-edit"' not in other.content.decode()


def test_a_write_the_agent_found_stale_itself_is_not_listed(admin_client_as_maya, hiring, ctx):
    review = resolve_record(AGENT, query="Kirat", collection_id=hiring.people.pk)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        review_ids=[review["resolution_id"]],
        decision_reason="Committed too late.",
    )
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    refused = call_refused(lambda: commit_write(AGENT, action_id=prepared["action_id"]))
    assert refused == "VERSION_CONFLICT"  # the agent read why in its own reply
    action = PreparedAction.objects.get(pk=prepared["action_id"])
    assert action.state == ActionState.STALE and "told when it committed" in action.dismissed_by
    assert "Nothing went stale unseen." in page(admin_client_as_maya, "admin:index")


def test_purge_keeps_a_stale_write_until_someone_dismisses_it(admin_client_as_maya, hiring, ctx):
    held = stale_write(hiring, ctx)
    PreparedAction.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(days=2))
    call_command("anchor_purge", stdout=StringIO())
    assert PreparedAction.objects.filter(pk=held.pk).exists()
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_dismiss", args=[held.pk]))
    call_command("anchor_purge", stdout=StringIO())
    assert not PreparedAction.objects.filter(pk=held.pk).exists()


def call_refused(call) -> str:
    try:
        call()
    except AnchorError as exc:
        return exc.code
    raise AssertionError("the call was not refused")
