"""The audit trail as a person browses it: found by a record's title or alias, events by name,
an event's page as a diff, and titles where the event itself holds only an ID."""

from __future__ import annotations

from django.urls import reverse

from records import services
from records.models import AuditEvent
from tests.admin.review_helpers import gate, held_update

AUDIT = "admin:records_auditevent_changelist"


def listed(client, **params: str) -> str:
    response = client.get(reverse(AUDIT), params)
    assert response.status_code == 200
    return response.content.decode()


def rows_of(page: str) -> str:
    start = page.index('id="result_list"')
    return page[start : page.index("</table>", start)]


def test_search_finds_a_records_events_by_its_title(admin_client_as_maya, hiring, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "offer"}, expected_version=1
    )
    rows = rows_of(listed(admin_client_as_maya, q="Kirat"))
    assert "Data updated" in rows
    assert "Abhishek" not in rows  # another record's events stay out


def test_search_finds_a_records_events_by_its_alias(admin_client_as_maya, hiring, ctx):
    services.record_alias_add(
        ctx=ctx, record_id=hiring.abhishek.pk, alias="Abhi", expected_version=1
    )
    rows = rows_of(listed(admin_client_as_maya, q="Abhi"))
    assert "Alias added" in rows and "Created" in rows
    nothing = listed(admin_client_as_maya, q="Zzyzx-nobody")
    assert "0 results" in nothing


def test_a_staff_member_finds_nothing_of_another_team_by_title(client, teams):
    alpha, bravo = teams
    client.force_login(alpha.staff)
    page = client.get(reverse(AUDIT), {"q": bravo.kirat_title}).content.decode()
    assert "0 results" in page
    own = client.get(reverse(AUDIT), {"q": alpha.kirat_title}).content.decode()
    assert alpha.kirat_title in rows_of(own) and bravo.word not in rows_of(own).lower()


def test_the_event_filter_reads_in_words(admin_client_as_maya, hiring):
    page = listed(admin_client_as_maya)
    filters = page[page.index('id="changelist-filter"') :]
    assert "Data updated" in filters and "Agent&#x27;s write approved" in filters
    assert ">record.updated<" not in filters
    created = rows_of(listed(admin_client_as_maya, kind="record.created"))
    assert "Created" in created and "Data updated" not in created


def test_an_approval_event_names_its_record_by_title(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = held_update(hiring.kirat, {"stage": "offer"})
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_approve", args=[held.pk]))
    rows = rows_of(listed(admin_client_as_maya, kind="action.approved"))
    kirat = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    assert f'<a href="{kirat}">Kirat</a>' in rows
    assert f">{hiring.kirat.pk}<" not in rows


def test_an_events_page_is_a_diff_with_titles(admin_client_as_maya, hiring, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "offer"}, expected_version=1
    )
    event = AuditEvent.objects.get(record_id=hiring.kirat.pk, kind="record.updated")
    page = admin_client_as_maya.get(
        reverse("admin:records_auditevent_change", args=[event.pk])
    ).content.decode()
    diff = page[
        page.index('id="event-changes"') : page.index("</table>", page.index("event-changes"))
    ]
    assert "data.stage" in diff and '<td class="new">offer</td>' in diff
    assert "email" not in diff  # unchanged fields are not noise
    kirat = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    assert f'<a href="{kirat}">Kirat</a>' in page
    assert "Data updated" in page
