"""The smaller things a reviewer meets, in a real browser: Save lands on the record, the queue's
reasons are whole and wrap, bulk results name writes by what they do, an event's page is named
in words, and a long link type in the link picture stays clear of the record in the middle."""

from __future__ import annotations

from django.urls import reverse

from records.models import AuditEvent, Record
from tests.admin.review_helpers import gate, held_update
from tests.admin.test_browser import sign_in
from tests.admin.test_browser_review import fits_both_sizes
from tests.conftest import link, make_record

LONG_REASON = (
    "Kirat said on the call that the offer should wait until the second reference comes back, "
    "and that the recruiter already knows; nothing else changes in his application for now."
)


def test_save_lands_on_the_record_just_saved(browser_page, live_server, reviewer, hiring):
    page = browser_page
    sign_in(page, live_server, reviewer)
    record = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    page.goto(f"{live_server.url}{record}?edit=1")
    page.fill("#id_title", "Kirat Singh")
    page.fill("#id_change_reason", "Full name")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    assert page.url == f"{live_server.url}{record}", "the record's own page, not the list"
    assert page.locator("#id_title").count() == 0, "reading, not the form"


def test_the_queue_shows_reasons_whole_and_bulk_results_by_what_they_do(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    gate(ctx, hiring.people)
    held_update(hiring.kirat, {"stage": "offer-on-hold"}, reason=LONG_REASON)
    held_update(hiring.abhishek, {"stage": "onsite"}, reason="The panel is booked.")
    page = browser_page
    sign_in(page, live_server, reviewer)
    queue = f"{live_server.url}{reverse('admin:workflow_preparedaction_changelist')}"
    fits_both_sizes(page, queue, shots, "queue-unfiltered")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(queue)
    assert LONG_REASON in page.locator("#result_list").inner_text(), "not cut"

    page.goto(f"{queue}?queue=pending")
    page.locator("#action-toggle").check()
    page.select_option("select[name=action]", "approve_selected")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist .success")
    said = page.locator(".messagelist").inner_text()
    assert "update Kirat: stage = offer-on-hold" in said and "update Abhishek" in said
    assert not any(word in said for word in (hiring.kirat.pk, hiring.abhishek.pk))


def test_an_events_page_is_named_in_words(browser_page, live_server, reviewer, hiring, ctx):
    from records import services

    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "offer"}, expected_version=1
    )
    event = AuditEvent.objects.filter(record_id=hiring.kirat.pk, kind="record.updated").latest("id")
    page = browser_page
    sign_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}{reverse('admin:records_auditevent_change', args=[event.pk])}")
    crumbs = page.locator(".breadcrumbs").inner_text()
    assert "Data updated: Kirat" in crumbs and "record.updated" not in crumbs
    assert "Data updated: Kirat" in page.locator("#content h2").first.inner_text()


def test_a_long_link_type_stays_clear_of_the_record_in_the_middle(
    browser_page, live_server, reviewer, hiring, ctx, shots
):
    for index in range(3):
        source = make_record(ctx, hiring.people, f"Referrer {index}")
        link(ctx, source, "referred_as_a_strong_backend_candidate_for", hiring.kirat)
    page = browser_page
    sign_in(page, live_server, reviewer)
    url = f"{live_server.url}{reverse('admin:records_record_change', args=[hiring.kirat.pk])}"
    fits_both_sizes(page, url, shots, "link-picture-long-labels")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(url)
    overlaps = page.evaluate(
        """() => {
          const box = e => e.getBoundingClientRect();
          const centre = box(document.querySelector('#neighbourhood g.node.center rect'));
          const labels = [...document.querySelectorAll('#neighbourhood g.edge text')].map(box);
          const hit = (a, b) => a.left < b.right && b.left < a.right &&
                                a.top < b.bottom && b.top < a.bottom;
          return labels.filter((l, i) => hit(l, centre) ||
                                labels.some((m, j) => j !== i && hit(l, m))).length;
        }"""
    )
    assert overlaps == 0
    assert Record.objects.filter(title__startswith="Referrer").count() == 3
