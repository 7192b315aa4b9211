"""In a real browser, a reviewer reads what agents' writes made, what collides, the audit trail
and the dashboard, with data made the way an agent makes it; each page fits at 1440×900 and at
390×844 (a phone) without scrolling sideways. Skipped or required as tests/admin/test_browser.py
says.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from records.models import Record
from tests.admin.review_helpers import gate, held_update
from tests.admin.review_imports import DIFFERENT_PERSON, referral_import
from tests.admin.test_browser import Shots, browser_page, shots, sign_in, sync_api  # noqa: F401

pytestmark = pytest.mark.slow

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


def fits_both_sizes(page: Any, url: str, shots: Shots, name: str) -> None:  # noqa: F811
    """Open the page at each size, screenshot it, and check nothing makes it scroll sideways."""
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(url)
        page.wait_for_load_state()
        shots.take(page, f"{name}-{size}")
        wide = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert wide[0] <= wide[1], f"{name} at {width}×{height} scrolls sideways: {wide}"


def action_url(live_server: Any, action_id: str) -> str:
    path = reverse("admin:workflow_preparedaction_change", args=[action_id])
    return f"{live_server.url}{path}"


def test_an_approved_import_names_what_it_made_in_a_real_browser(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    hiring,
    ctx,
    shots,  # noqa: F811
):
    gate(ctx, hiring.people)
    held = referral_import(hiring)
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(action_url(live_server, held.pk))
    flagged = page.locator("#row-r1").inner_text()
    assert "create anyway" in flagged and "agent-reported" in flagged
    assert DIFFERENT_PERSON in flagged
    links = page.locator("#import-links").inner_text()
    assert "None" not in links and "Meera Iyer (row r2)" in links
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    assert "Links it made" in page.content()
    meera = Record.objects.get(title="Meera Iyer")
    page.click("#row-r2 .anchor-made a")
    page.wait_for_selector("#site-name")
    assert reverse("admin:records_record_change", args=[meera.pk]) in page.url
    fits_both_sizes(page, action_url(live_server, held.pk), shots, "import-applied")


def test_a_held_write_flags_a_colliding_one_in_a_real_browser(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    hiring,
    ctx,
    shots,  # noqa: F811
):
    gate(ctx, hiring.people)
    first = held_update(hiring.kirat, {"stage": "offer"})
    second = held_update(hiring.kirat, {"stage": "rejected"}, reason="The debrief went badly.")
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(action_url(live_server, first.pk))
    said = page.locator("#overlaps").inner_text()
    assert "same field" in said and "Kirat: stage" in said
    page.click("#overlaps a")
    page.wait_for_selector("#review")
    assert second.pk in page.url
    fits_both_sizes(page, action_url(live_server, first.pk), shots, "held-overlap")


def test_a_reviewer_finds_and_reads_an_event_in_a_real_browser(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    hiring,
    ctx,
    shots,  # noqa: F811
):
    gate(ctx, hiring.people)
    held = held_update(
        hiring.kirat, {"stage": "offer"}, clarification="The user said the panel agreed."
    )
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(action_url(live_server, held.pk))
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    audit = f"{live_server.url}{reverse('admin:records_auditevent_changelist')}"
    page.goto(audit)
    page.fill("#searchbar", "Kirat")
    page.press("#searchbar", "Enter")
    page.wait_for_selector("#result_list")
    listed = page.locator("#result_list").inner_text()
    assert "Agent's write approved" in listed and "Data updated" in listed
    assert hiring.kirat.pk not in listed
    filters = page.locator("#changelist-filter").inner_text()
    assert "Data updated" in filters and "record.updated" not in filters
    page.click("#changelist-filter a:text('Data updated')")
    page.wait_for_selector("#result_list")
    page.click("#result_list tbody tr th a")
    page.wait_for_selector("#event-changes")
    diff = page.locator("#event-changes").inner_text()
    assert "data.stage" in diff and "offer" in diff
    fits_both_sizes(page, page.url, shots, "audit-event")
    fits_both_sizes(page, f"{audit}?q=Kirat", shots, "audit-search")


def test_the_dashboard_counts_what_it_lists_in_a_real_browser(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    hiring,
    ctx,
    shots,  # noqa: F811
):
    referral_import(hiring)  # applied at once: one line in recent changes
    gate(ctx, hiring.people)
    for n in range(12):
        held_update(hiring.kirat, {f"note{n}": "x"})
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:index')}")
    queue = page.locator("#dashboard-queue")
    assert "Writes awaiting your approval (12)" in queue.inner_text()
    assert queue.locator("li").count() == 10
    recent = page.locator("#dashboard-recent").inner_text()
    assert "One agent write: Created 3 · Linked 2" in recent
    assert "Agendas open or not yet synced" in page.locator("#dashboard-agendas").inner_text()
    fits_both_sizes(page, page.url, shots, "dashboard")
    queue.locator("a.anchor-more").click()
    page.wait_for_selector("#result_list")
    assert page.locator("#result_list tbody tr").count() == 12


def test_a_stale_write_stays_in_sight_until_dismissed_in_a_real_browser(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    hiring,
    ctx,
    shots,  # noqa: F811
):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"}, reason="The hiring manager said offer.")
    page = browser_page
    sign_in(page, live_server, reviewer)
    record = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    fits_both_sizes(page, f"{live_server.url}{record}?edit=1", shots, "record-edit-pending")
    warned = page.locator("#pending-on-edit").inner_text()
    assert "update Kirat: stage" in warned and "stale only if you change stage" in warned
    # A person's rename makes the held write stale: its review of "Kirat" now answers otherwise.
    page.fill("#id_title", "Kirat Singh")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist .success")
    page.goto(f"{live_server.url}{reverse('admin:index')}")
    attention = page.locator("#dashboard-attention")
    said = attention.inner_text()
    assert "update Kirat Singh: stage = offer" in said and "from local-agent" in said
    fits_both_sizes(page, page.url, shots, "dashboard-attention")
    fits_both_sizes(page, f"{live_server.url}{record}", shots, "record-attention")
    page.goto(action_url(live_server, held.pk))
    assert "Nothing expires" in page.locator(".field-expiry").inner_text()
    page.goto(f"{live_server.url}{reverse('admin:index')}")
    page.locator("#dashboard-attention button.anchor-dismiss").click()
    page.wait_for_selector(".messagelist .success")
    assert "Nothing went stale unseen." in page.locator("#dashboard-attention").inner_text()
