"""Before an approval would make another waiting write stale, the approve page says which and
why, and the person can approve anyway; the stale reason then names that approval."""

from __future__ import annotations

from django.urls import reverse

from tests.admin.review_helpers import gate, held_update
from tests.workflow.test_knock_on import CHOSEN, archive, state
from workflow.models import ActionState


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
