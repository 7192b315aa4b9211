"""Before an approval would make another waiting write stale, the approve page says which and
why, and the person can approve anyway; the stale reason then names that approval."""

from __future__ import annotations

from django.urls import reverse

from tests.admin.review_helpers import AGENT, gate, held_update
from tests.workflow.test_knock_on import CHOSEN, archive, state
from workflow.actions import commit_write, prepare_write
from workflow.client_confirmation import confirm_resolution, resolution_question
from workflow.models import ActionState
from workflow.resolution import resolve_record


def test_the_approve_page_warns_first_and_approves_anyway(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    choice = held_update(hiring.rahul_backend, {"team": "platform"}, clarification=CHOSEN).pk
    other = archive(hiring.rahul_frontend)
    url = reverse("admin:workflow_preparedaction_approve", args=[other])

    warned = admin_client_as_maya.post(url, {"note": "Left us"})
    page = warned.content.decode()
    assert warned.status_code == 200 and 'id="approve-anyway"' in page
    assert reverse("admin:workflow_preparedaction_change", args=[choice]) in page
    assert "made this write stale" in page and "is now archived" in page
    assert state(other).state == ActionState.AWAITING_APPROVAL, "nothing applied yet"

    done = admin_client_as_maya.post(url, {"note": "Left us", "anyway": "1"})
    assert done.status_code == 302
    assert state(other).state == ActionState.COMMITTED
    assert state(other).decision_note == "Left us"
    assert state(choice).state == ActionState.STALE
    assert state(choice).stale_reason.startswith("Approving “archive Rahul")


def test_the_approve_page_asks_nothing_when_no_other_write_goes_stale(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    kirat = held_update(hiring.kirat, {"stage": "offer"}).pk
    url = reverse("admin:workflow_preparedaction_approve", args=[kirat])
    assert admin_client_as_maya.post(url).status_code == 302
    assert state(kirat).state == ActionState.COMMITTED


def test_the_warning_says_when_it_undoes_the_users_choice_in_the_client(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    review = resolve_record(AGENT, query="Rahul", collection_id=hiring.people.pk)
    question = resolution_question(AGENT, review["resolution_id"])
    assert question is not None
    client = {"name": "test-client", "version": "1"}
    confirm_resolution(AGENT, question, choice=hiring.rahul_backend.pk, client=client)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={
            "record_id": hiring.rahul_backend.pk,
            "changes": {"team": "platform"},
            "expected_version": 1,
        },
        review_ids=[review["resolution_id"]],
        decision_reason="The user picked the backend Rahul.",
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    other = archive(hiring.rahul_frontend)

    url = reverse("admin:workflow_preparedaction_approve", args=[other])
    page = admin_client_as_maya.post(url).content.decode()
    assert "It undoes a choice the user confirmed in the client." in page
