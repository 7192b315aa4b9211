"""In a real browser, a reviewer works the queue: at 1366 px no column runs over another, on a
phone the list stacks instead of squeezing, the user's answer in the client is on the page where
the write is approved, and axe-core finds no WCAG 2.1 A/AA violation on the pages a reviewer
uses. Skipped or required as tests/admin/test_browser.py says."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse

from records.models import AuditEvent
from tests.admin.queue_helpers import held_after_asking
from tests.admin.review_helpers import gate, held_update
from tests.admin.review_imports import referral_import
from tests.admin.test_browser import browser_page, sign_in, sync_api  # noqa: F401
from workflow.actions import approve_prepared_action
from workflow.models import ActionState, PreparedAction

pytestmark = pytest.mark.slow

WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def no_axe_violations(page: Any, name: str) -> None:
    found = Axe().run(page, options=WCAG).response["violations"]
    shown = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in found]
    assert not shown, f"axe-core on {name}: {shown}"


def boxes(page: Any, selector: str) -> list[dict[str, float]]:
    return [b for b in (el.bounding_box() for el in page.locator(selector).all()) if b]


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


@pytest.fixture
def queue(hiring, ctx) -> list[Any]:
    gate(ctx, hiring.people)
    return [
        held_update(hiring.kirat, {"stage": "offer"}, reason="The panel agreed. " * 8),
        held_update(hiring.abhishek, {"stage": "onsite"}),
        held_after_asking(hiring.rahul_backend, {"stage": "screen"}),
    ]


def test_the_queue_at_1366_px_and_on_a_phone(browser_page, live_server, reviewer, queue):  # noqa: F811
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.set_viewport_size({"width": 1366, "height": 800})
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}")
    for row in page.locator("#result_list tbody tr").all():
        cells = [c.bounding_box() for c in row.locator("td, th").all()]
        pill = row.locator(".anchor-badge").bounding_box()
        actor = row.locator("td.field-prepared_by").bounding_box()
        assert pill and actor and not overlaps(pill, actor)
        assert all(
            pill["x"] + pill["width"] <= c["x"] + 1 for c in cells if c and c["x"] > pill["x"]
        )
    header = page.locator("#result_list th.column-created_at").bounding_box()
    line = page.locator("#result_list th.column-prepared_by").bounding_box()
    assert header and line and header["height"] <= line["height"] + 1  # "CREATED AT" not broken
    no_axe_violations(page, "queue at 1366 px")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    summaries = boxes(page, "#result_list td.field-summary, #result_list th.field-summary")
    assert summaries and all(s["width"] >= 300 for s in summaries), summaries
    wide = page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    assert wide


def test_a_reviewer_reads_the_users_answer_and_works_through_the_queue(
    browser_page,  # noqa: F811
    live_server,
    reviewer,
    queue,
):
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}?q=Rahul")
    no_axe_violations(page, "searched queue")
    page.click("#result_list a:text('update Rahul')")
    answered = page.locator("#clarifications [data-source=user]")
    assert "dialog-client 7.1" in answered.inner_text()
    assert "Which one do you mean" in answered.inner_text()
    assert page.locator("[data-source=agent]").count() == 0
    no_axe_violations(page, "waiting write")
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    assert "q%3DRahul" in page.url  # no other Rahul waits: the applied page, filters kept
    assert page.locator("#clarifications [data-source=user]").count() == 1
    no_axe_violations(page, "applied write")
    page.click(".breadcrumbs a:text('Prepared actions')")
    assert "q=Rahul" in page.url
    record_id = queue[2].arguments["record_id"]
    page.goto(f"{live_server.url}{reverse('admin:records_record_change', args=[record_id])}")
    assert page.locator("#history [data-source=user]").count() >= 1
    no_axe_violations(page, "record page")
    page.click("#edit-link")
    page.wait_for_selector("#record_form")
    no_axe_violations(page, "record edit form")
    reject = reverse("admin:workflow_preparedaction_reject", args=[queue[1].pk])
    page.goto(f"{live_server.url}{reject}")
    no_axe_violations(page, "reject page")
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}")
    page.check(f"input[name=_selected_action][value='{queue[0].pk}']")
    page.check(f"input[name=_selected_action][value='{queue[1].pk}']")
    page.select_option("select[name=action]", "reject_selected")
    page.click("button[name=index]")
    page.wait_for_selector("#reject-chosen")
    no_axe_violations(page, "bulk reject page")
    page.fill("#id_reason", "Not this week.")
    page.click("#reject-submit")
    page.wait_for_selector(".messagelist .success")
    assert page.locator(".messagelist .success").count() == 2
    event = AuditEvent.objects.filter(action_id=queue[2].pk, kind="record.updated").get()
    page.goto(f"{live_server.url}{reverse('admin:records_auditevent_change', args=[event.pk])}")
    assert page.locator("[data-source=user]").count() == 1
    no_axe_violations(page, "audit event")
    page.goto(f"{live_server.url}{reverse('admin:records_auditevent_changelist')}")
    no_axe_violations(page, "audit list")
    page.goto(f"{live_server.url}{reverse('admin:index')}")
    no_axe_violations(page, "dashboard")


def test_pages_with_a_stale_write_pass_axe(browser_page, live_server, reviewer, hiring, ctx):  # noqa: F811
    gate(ctx, hiring.people)
    first = held_update(hiring.kirat, {"stage": "offer"})
    second = held_update(hiring.kirat, {"stage": "rejected"}, clarification="The user said no.")
    page = browser_page
    sign_in(page, live_server, reviewer)
    colliding = reverse("admin:workflow_preparedaction_change", args=[second.pk])
    page.goto(f"{live_server.url}{colliding}")
    assert page.locator("#overlaps").count() == 1
    assert page.locator("[data-source=agent]").count() == 1
    no_axe_violations(page, "write with a colliding one")
    approve_prepared_action(action_id=first.pk, reviewer="user:maya")
    assert PreparedAction.objects.get(pk=second.pk).state == ActionState.STALE
    for name, url in [
        ("dashboard with a stale write", reverse("admin:index")),
        ("stale write", reverse("admin:workflow_preparedaction_change", args=[second.pk])),
        (
            "record with a stale write",
            reverse("admin:records_record_change", args=[hiring.kirat.pk]),
        ),
    ]:
        page.goto(f"{live_server.url}{url}")
        no_axe_violations(page, name)


def test_an_import_waiting_and_applied_passes_axe(browser_page, live_server, reviewer, hiring, ctx):  # noqa: F811
    gate(ctx, hiring.people)
    held = referral_import(hiring)
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:workflow_preparedaction_change', args=[held.pk])}")
    no_axe_violations(page, "import awaiting a decision")
    page.click("#approve-button")
    page.wait_for_selector(".messagelist .success")
    no_axe_violations(page, "import applied")
