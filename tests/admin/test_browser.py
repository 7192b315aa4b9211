"""A real browser (headless Chromium through Playwright) signs in, edits and archives a record,
and approves an agent's pending write. Skipped where Playwright or the browser
($ANCHOR_CHROMIUM, default /usr/bin/chromium) is absent, except with ANCHOR_REQUIRE_BROWSER=1
(set by .ci/run): there a missing browser fails the tests, so CI cannot pass without them.

Screenshots are taken only when $ANCHOR_SCREENSHOT_DIR names a directory for them (CI artifacts).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.urls import reverse
from django.utils import timezone

from records import services
from records.models import AuditEvent, Record, Relationship
from tests.admin.review_helpers import AGENT, gate, held_update
from tests.conftest import make_collection, make_record
from workflow.actions import commit_write, prepare_write
from workflow.resolution import resolve_record
from workflow.scope import Scope

CHROMIUM = Path(os.environ.get("ANCHOR_CHROMIUM") or "/usr/bin/chromium")
REQUIRED = os.environ.get("ANCHOR_REQUIRE_BROWSER") == "1"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PASSWORD = "correct horse battery"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def sync_api():
    """Playwright's sync API, once the browser is known to be there; else skip, or fail."""
    missing = "" if CHROMIUM.exists() else f"no browser at {CHROMIUM}"
    try:
        from playwright import sync_api
    except ImportError:
        missing = "playwright is not installed"
    if missing and REQUIRED:
        pytest.fail(f"{missing}, and ANCHOR_REQUIRE_BROWSER=1 requires the browser tests to run")
    if missing:
        pytest.skip(missing)
    return sync_api


@pytest.fixture(scope="module")
def browser(sync_api):
    """One Chromium for a test file: launching it costs a second or two, a fresh context none."""
    # Playwright's sync API runs an event loop in this thread; the tests' own ORM calls are
    # still plain synchronous code, so Django's async-safety guard is lifted while it runs.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_api.sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            yield launched
            launched.close()


@pytest.fixture
def browser_page(browser):
    # A context of its own per test: no cookie, session or storage carries over.
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
    # ORM calls made while Playwright's loop is alive get their own connection (Django
    # keys connections by context); close it here or PostgreSQL's test database stays in
    # use and cannot be dropped at the end of the run.
    connections.close_all()


class Shots:
    """Screenshots for a person to look at, taken only when $ANCHOR_SCREENSHOT_DIR names where
    (CI artifacts, a review of the admin's looks): no test reads them, and a full-page capture
    costs a browser a good part of a second."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def take(self, page: Any, name: str, *, full_page: bool = True) -> None:
        if self.directory is not None:
            page.screenshot(path=str(self.directory / f"{name}.png"), full_page=full_page)


def shots_as_asked() -> Shots:
    """Shots into $ANCHOR_SCREENSHOT_DIR (made if missing), or none when it is unset."""
    wanted = os.environ.get("ANCHOR_SCREENSHOT_DIR")
    if not wanted:
        return Shots(None)
    Path(wanted).mkdir(parents=True, exist_ok=True)
    return Shots(Path(wanted))


@pytest.fixture
def shots() -> Shots:
    return shots_as_asked()


class _Page:
    """Records what it was asked to capture."""

    def __init__(self) -> None:
        self.captured: list[tuple[str, bool]] = []

    def screenshot(self, *, path: str, full_page: bool) -> None:
        self.captured.append((path, full_page))


def test_screenshots_are_taken_only_where_asked_for(tmp_path, monkeypatch):
    page = _Page()
    monkeypatch.delenv("ANCHOR_SCREENSHOT_DIR", raising=False)
    shots_as_asked().take(page, "queue")
    assert page.captured == []
    monkeypatch.setenv("ANCHOR_SCREENSHOT_DIR", str(tmp_path / "shots"))
    shots_as_asked().take(page, "queue", full_page=False)
    assert page.captured == [(str(tmp_path / "shots" / "queue.png"), False)]
    assert (tmp_path / "shots").is_dir()


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
    assert page.locator("#id_title").count() == 0  # reading first
    page.click("#edit-link")
    page.fill("#id_title", "Kirat Singh")
    page.fill("#id_change_reason", "Full name from his CV")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")
    shots.take(page, "record-edited")

    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert (kirat.title, kirat.version) == ("Kirat Singh", 2)
    assert AuditEvent.objects.get(record_id=kirat.pk, kind="record.renamed").actor_id == (
        f"user:{reviewer.username}"
    )
    assert "Full name from his CV" in page.locator("#history").inner_text()

    page.click("text=Archive…")  # the read page, after saving
    page.fill("#id_reason", "Withdrew")
    page.click("input[type=submit][value='Yes, archive it']")
    page.wait_for_selector(".messagelist .success")
    shots.take(page, "record-archived")
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
    shots.take(page, "pending-action")
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    shots.take(page, "action-approved")

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
    shots.take(page, "staff-records")

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
    shots.take(page, "staff-foreign-record")


# --- reviewing held writes -------------------------------------------------------------------


def _queue(page, live_server) -> None:
    page.goto(
        f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}?queue=pending"
    )


def _open_action(page, live_server, action_id: str) -> None:
    url = reverse("admin:workflow_preparedaction_change", args=[action_id])
    page.goto(f"{live_server.url}{url}")
    page.wait_for_selector("#review")


def test_person_rejects_a_write_with_a_reason_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"})
    page = browser_page
    sign_in(page, live_server, reviewer)
    _open_action(page, live_server, held.pk)
    assert "update Kirat: stage = offer" in page.locator("#review-summary").inner_text()
    page.click("#reject-link")
    page.fill("#id_reason", "Wait for the debrief.")
    page.click("#reject-submit")
    page.wait_for_selector(".messagelist .success")
    assert "Rejected by user:maya" in page.locator("#decided").inner_text()
    shots.take(page, "action-rejected")
    replay = commit_write(AGENT, action_id=held.pk)
    assert (replay["status"], replay["reason"]) == ("rejected", "Wait for the debrief.")


def test_a_stale_write_is_refused_and_says_why_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"})
    page = browser_page
    sign_in(page, live_server, reviewer)
    _open_action(page, live_server, held.pk)  # drawn while still pending
    services.record_update(  # lands while the page is open
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "withdrawn"}, expected_version=1
    )
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .error")
    said = page.locator(".messagelist").inner_text()
    assert "Not applied, nothing was written" in said and "“Kirat” changed" in said
    assert "“Kirat” changed" in page.locator("#stale-reason").inner_text()
    shots.take(page, "action-stale")
    assert Record.objects.get(pk=hiring.kirat.pk).data["stage"] == "withdrawn"


def test_bulk_approval_of_independent_writes_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held_update(hiring.kirat, {"stage": "offer"})
    held_update(hiring.abhishek, {"stage": "onsite"})
    page = browser_page
    sign_in(page, live_server, reviewer)
    _queue(page, live_server)
    listed = page.locator("#result_list").inner_text()
    assert "update Kirat: stage = offer" in listed and "update Abhishek" in listed
    page.check("#action-toggle")
    page.select_option("select[name=action]", "approve_selected")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist .success")
    shots.take(page, "bulk-approved")
    assert page.locator(".messagelist .error").count() == 0
    assert Record.objects.get(pk=hiring.kirat.pk).data["stage"] == "offer"
    assert Record.objects.get(pk=hiring.abhishek.pk).data["stage"] == "onsite"


def test_a_stale_record_form_is_refused_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    page = browser_page
    sign_in(page, live_server, reviewer)
    url = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    page.goto(f"{live_server.url}{url}?edit=1")
    services.record_update(  # an agent writes while the form is open
        ctx=ctx, record_id=hiring.kirat.pk, changes={"city": "Pune"}, expected_version=1
    )
    page.fill("#id_title", "Kirat Singh")
    page.click("input[name=_continue]")
    page.wait_for_selector(".errornote")
    assert "changed since you opened it" in page.content()
    shots.take(page, "record-stale-form")
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert (kirat.title, kirat.data["city"]) == ("Kirat", "Pune")


def test_the_audit_list_fits_1440_pixels_in_a_real_browser(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held_update(
        hiring.kirat,
        {"stage": "offer"},
        reason="A long stated reason " * 12,
        clarification="The user said, at some length, " + "that this is right " * 12,
    )
    page = browser_page
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:records_auditevent_changelist')}")
    overflow = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
        " document.querySelector('.results').scrollWidth,"
        " document.querySelector('.results').clientWidth]"
    )
    shots.take(page, "audit-list-1440")
    assert overflow[0] <= overflow[1] and overflow[2] <= overflow[3], overflow
    assert "Created" in page.locator("#result_list").inner_text()  # not "record.created"


def test_a_record_with_3000_incoming_links_saves_in_a_real_browser(
    browser_page, live_server, reviewer, ctx, shots
):
    collection = make_collection(ctx, "teams")
    hub = make_record(ctx, collection, "Platform team")
    now = timezone.now()
    sources = [
        Record(
            workspace_id=ctx.workspace_id,
            collection=collection,
            title=f"Engineer {i:04}",
            created_by="seed",
            created_at=now,
            updated_at=now,
        )
        for i in range(3000)
    ]
    Record.objects.bulk_create(sources, batch_size=500)
    Relationship.objects.bulk_create(
        [
            Relationship(
                workspace_id=ctx.workspace_id,
                source=s,
                relationship_type="member_of",
                target=hub,
                created_by="seed",
                created_at=now,
            )
            for s in sources
        ],
        batch_size=500,
    )
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:records_record_change', args=[hub.pk])}")
    assert "Showing 50 of 3000" in page.locator("#links").inner_text()
    page.click("#edit-link")
    page.fill("#id_title", "Platform team (core)")
    page.fill("#id_change_reason", "Renamed after the reorg")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")
    shots.take(page, "hub-saved", full_page=False)
    assert Record.objects.get(pk=hub.pk).title == "Platform team (core)"
    assert Relationship.objects.filter(target=hub).count() == 3000
