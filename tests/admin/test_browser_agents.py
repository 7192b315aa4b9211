"""In a real browser: a write maya's agent made through her personal token reads as that agent
acting for her on the dashboard; from the header she opens "Your agents", sees the token and
revokes it. Fixtures and skipping as in test_browser.py."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records.acting import TOKEN, credential_key
from records.models.membership import AccessToken
from records.services import access_token_create
from tests.admin.review_helpers import gate
from tests.admin.test_browser import sign_in
from workflow.actions import commit_write, prepare_write
from workflow.resolution import resolve_record
from workflow.scope import Scope

pytestmark = pytest.mark.slow


def test_a_person_sees_their_agents_write_and_revokes_its_token_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    token, _ = access_token_create(user=reviewer, name="laptop")
    agent = Scope(
        "local", "user:maya", credential=credential_key(TOKEN, token.pk), credential_name="laptop"
    )
    review = resolve_record(agent, query="Kirat", collection_id=hiring.people.pk)
    prepared = prepare_write(
        agent,
        operation="update_record",
        arguments={
            "record_id": hiring.kirat.pk,
            "changes": {"stage": "offer"},
            "expected_version": hiring.kirat.version,
        },
        review_ids=[review["resolution_id"]],
        decision_reason="The panel agreed.",
    )
    assert commit_write(agent, action_id=prepared["action_id"])["status"] == "awaiting_approval"

    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:index')}")
    queue = page.locator("#dashboard-queue").inner_text()
    assert "agent (token: laptop) for user:maya" in queue
    shots.take(page, "agent-for-person")

    page.click("#user-tools >> text=Your agents")
    row = page.locator(f"tr[data-credential='token:{token.pk}']")
    # Held for approval, the write has changed nothing yet.
    assert "laptop" in row.inner_text() and "none yet" in row.inner_text()
    page.click(f"tr[data-credential='token:{token.pk}'] input[type=submit]")
    page.wait_for_selector(".messagelist .success")
    assert "Revoked laptop" in page.locator(".messagelist").inner_text()
    assert page.locator(f"tr[data-credential='token:{token.pk}']").count() == 0
    assert AccessToken.objects.get(pk=token.pk).revoked_at is not None
