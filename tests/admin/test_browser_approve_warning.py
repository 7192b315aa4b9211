"""In a real browser: approving a write that would make another waiting write stale first says
which and why, and "Approve anyway" applies it; the other write's page then names the cause."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.admin.review_helpers import gate, held_update
from tests.admin.test_browser import browser, browser_page, sign_in, sync_api
from tests.workflow.test_knock_on import CHOSEN, archive, state
from workflow.models import ActionState

__all__ = ["browser", "browser_page", "sync_api"]  # the fixtures this file borrows

pytestmark = pytest.mark.slow


def test_the_reviewer_is_warned_and_approves_anyway_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx
):
    gate(ctx, hiring.people)
    choice = held_update(hiring.rahul_backend, {"team": "platform"}, clarification=CHOSEN).pk
    other = archive(hiring.rahul_frontend)

    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_change', args=[other])}")
    page.click("#approve-button")
    warning = page.wait_for_selector("#made-stale")
    assert "is now archived" in warning.inner_text()
    assert state(other).state == ActionState.AWAITING_APPROVAL

    page.click("#approve-anyway")
    page.wait_for_selector(".messagelist .success")
    assert state(other).state == ActionState.COMMITTED
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_change', args=[choice])}")
    assert "Approving “archive Rahul" in page.inner_text("body")
