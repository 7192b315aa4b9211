"""A real browser (headless Chromium through Playwright) signs in, edits and archives a record,
and approves an agent's pending write. Skipped where Playwright or /usr/bin/chromium is absent.

Screenshots go to the test's tmp_path, or to $ANCHOR_SCREENSHOT_DIR when set (CI artifacts).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connections
from django.urls import reverse

from records import services
from records.models import AuditEvent, Record
from workflow.actions import commit_write, prepare_write
from workflow.resolution import resolve_record
from workflow.scope import Scope

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PASSWORD = "correct horse battery"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no browser at {CHROMIUM}"),
]


@pytest.fixture
def browser_page(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # still plain synchronous code, so Django's async-safety guard is lifted for this test.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(15_000)
        yield page
        browser.close()
        # ORM calls made while Playwright's loop is alive get their own connection (Django
        # keys connections by context); close it here or PostgreSQL's test database stays in
        # use and cannot be dropped at the end of the run.
        connections.close_all()


@pytest.fixture
def shots(tmp_path) -> Path:
    target = Path(os.environ.get("ANCHOR_SCREENSHOT_DIR", tmp_path))
    target.mkdir(parents=True, exist_ok=True)
    return target


def sign_in(page, live_server, reviewer) -> None:
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", reviewer.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")


def test_person_edits_and_archives_a_record_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, shots
):
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:records_record_change', args=[hiring.kirat.pk])}")
    assert page.locator("#neighbourhood svg").count() == 1
    page.fill("#id_title", "Kirat Singh")
    page.fill("#id_change_reason", "Full name from his CV")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")
    page.screenshot(path=str(shots / "record-edited.png"), full_page=True)

    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert (kirat.title, kirat.version) == ("Kirat Singh", 2)
    assert AuditEvent.objects.get(record_id=kirat.pk, kind="record.renamed").actor_id == (
        f"user:{reviewer.username}"
    )
    assert "Full name from his CV" in page.locator("#history").inner_text()

    page.click("text=Archive…")
    page.fill("#id_reason", "Withdrew")
    page.click("input[type=submit][value='Yes, archive it']")
    page.wait_for_selector(".messagelist .success")
    page.screenshot(path=str(shots / "record-archived.png"), full_page=True)
    assert Record.objects.get(pk=hiring.kirat.pk).archived_at is not None


def test_person_approves_a_pending_write_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    agent = Scope("local", "local-agent")
    review = resolve_record(agent, query="Abhishek", collection_id=hiring.people.pk)
    prepared = prepare_write(
        agent,
        operation="update_record",
        arguments={
            "record_id": hiring.abhishek.pk,
            "changes": {"stage": "offer"},
            "expected_version": 1,
        },
        review_ids=[review["resolution_id"]],
        decision_reason="The panel recommends an offer.",
    )
    assert commit_write(agent, action_id=prepared["action_id"])["status"] == "awaiting_approval"

    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(
        f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}?queue=pending"
    )
    page.click("#result_list tbody tr th a")
    page.wait_for_selector("#decision")
    page.screenshot(path=str(shots / "pending-action.png"), full_page=True)
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    page.screenshot(path=str(shots / "action-approved.png"), full_page=True)

    assert Record.objects.get(pk=hiring.abhishek.pk).data["stage"] == "offer"


def test_a_staff_member_of_one_team_finds_nothing_of_another_in_a_real_browser(
    browser_page, live_server, teams, shots
):
    alpha, bravo = teams
    page = browser_page
    sign_in(page, live_server, alpha.staff)

    page.goto(f"{live_server.url}{reverse('admin:records_record_changelist')}")
    listed = page.locator("#result_list").inner_text()
    assert alpha.kirat_title in listed
    assert bravo.word not in page.content().lower()
    page.screenshot(path=str(shots / "staff-records.png"), full_page=True)

    page.fill("#searchbar", bravo.kirat_title)
    page.press("#searchbar", "Enter")
    page.wait_for_load_state()
    assert page.locator("#result_list tbody tr").count() == 0
    assert "0 results" in page.locator("#changelist-search").inner_text()

    typed = page.goto(
        f"{live_server.url}{reverse('admin:records_record_change', args=[bravo.kirat.pk])}"
    )
    assert typed is not None and typed.status == 404
    assert bravo.kirat_title.lower() not in page.content().lower()
    page.screenshot(path=str(shots / "staff-foreign-record.png"), full_page=True)
