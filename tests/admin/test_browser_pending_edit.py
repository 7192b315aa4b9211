"""A person edits a record that has an agent's update waiting, in a real browser.

The edit form names the pending update and the keys it sets. Editing another key leaves it
applicable: the person approves it afterwards and both changes stand. Editing one of its keys
makes it stale, and its page says which key both set.
"""

from __future__ import annotations

import json

from django.urls import reverse

from records.models import Record
from tests.admin.review_helpers import gate, held_update
from tests.admin.test_browser import sign_in
from workflow.models import ActionState, PreparedAction


def _edit_data(page, live_server, record: Record, data: dict, reason: str) -> None:
    url = reverse("admin:records_record_change", args=[record.pk])
    page.goto(f"{live_server.url}{url}?edit=1")
    page.fill("#id_data", json.dumps(data))
    page.fill("#id_change_reason", reason)
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")


def test_the_edit_form_names_the_pending_update_and_a_disjoint_edit_keeps_it(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"address": "14 Residency Rd", "phone": "98450"})
    page = browser_page
    sign_in(page, live_server, reviewer)

    url = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    page.goto(f"{live_server.url}{url}?edit=1")
    panel = page.locator("#pending-on-edit").inner_text()
    assert "It sets address, phone" in panel
    assert "changing anything else leaves it applicable" in panel
    shots.take(page, "edit-with-pending")

    kirat = Record.objects.get(pk=hiring.kirat.pk)
    _edit_data(
        page, live_server, kirat, {**kirat.data, "email": "kirat.s@example.com"}, "New email"
    )
    assert PreparedAction.objects.get(pk=held.pk).state == ActionState.AWAITING_APPROVAL

    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_change', args=[held.pk])}")
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.data["email"] == "kirat.s@example.com"
    assert (kirat.data["address"], kirat.data["phone"]) == ("14 Residency Rd", "98450")


def test_an_edit_of_a_key_the_update_sets_makes_it_stale_and_its_page_says_which(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"address": "14 Residency Rd", "phone": "98450"})
    page = browser_page
    sign_in(page, live_server, reviewer)

    kirat = Record.objects.get(pk=hiring.kirat.pk)
    _edit_data(page, live_server, kirat, {**kirat.data, "phone": "99000"}, "He called")

    action_page = reverse("admin:workflow_preparedaction_change", args=[held.pk])
    page.goto(f"{live_server.url}{action_page}")
    assert "also set phone, which this write sets too" in page.content()
    shots.take(page, "edit-made-stale")
    assert PreparedAction.objects.get(pk=held.pk).state == ActionState.STALE
    assert "address" not in Record.objects.get(pk=hiring.kirat.pk).data
