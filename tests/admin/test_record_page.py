"""Reading first: a record page opens read-only with its data, pending agent writes and history;
links are capped per direction; the edit form is a chosen step that still saves on a hub record.
The admin index is a dashboard of the person's own workspaces."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records import services
from records.admin.neighbourhood import LINK_LIMIT
from records.models import Record, Relationship
from tests.admin.forms import page_post_data
from tests.admin.review_helpers import gate, held_update
from tests.admin.test_scoping import assert_nothing_of, signed_in
from tests.conftest import make_collection, make_record


def record_url(record: Record) -> str:
    return reverse("admin:records_record_change", args=[record.pk])


def test_the_page_opens_read_only_with_data_pending_writes_and_history(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    held_update(hiring.kirat, {"stage": "offer"})
    response = admin_client_as_maya.get(record_url(hiring.kirat))
    page = response.content.decode()
    assert "adminform" not in response.context  # no form until the person asks for one
    assert "kirat@example.com" in page
    order = [
        page.index(marker) for marker in ('id="record-data"', 'id="pending-writes"', 'id="history"')
    ]
    assert order == sorted(order)
    assert "update Kirat: stage = offer" in page
    assert f'href="{record_url(hiring.kirat)}?edit=1"' in page

    form = admin_client_as_maya.get(record_url(hiring.kirat), {"edit": "1"})
    assert "title" in form.context["adminform"].form.fields


def test_no_pending_panel_without_a_pending_write(admin_client_as_maya, hiring):
    page = admin_client_as_maya.get(record_url(hiring.kirat)).content.decode()
    assert 'id="pending-writes"' not in page


@pytest.fixture
def hub(ctx):
    """A record with LINK_LIMIT + 10 links in each direction."""
    collection = make_collection(ctx, "hubs")
    center = make_record(ctx, collection, "Center")
    spokes = [make_record(ctx, collection, f"Spoke {i:03}") for i in range(LINK_LIMIT + 10)]
    for spoke in spokes:
        services.relationship_create(
            ctx=ctx, source_id=spoke.pk, relationship_type="part_of", target_id=center.pk
        )
        services.relationship_create(
            ctx=ctx, source_id=center.pk, relationship_type="has", target_id=spoke.pk
        )
    return center


def test_links_are_capped_per_direction_with_a_link_to_the_full_list(admin_client_as_maya, hub):
    page = admin_client_as_maya.get(record_url(hub)).content.decode()
    links = page[page.index('id="links"') :]
    total = LINK_LIMIT + 10
    assert links.count("<td>part_of</td>") == LINK_LIMIT
    assert links.count("<td>has</td>") == LINK_LIMIT
    assert f"Showing {LINK_LIMIT} of {total}" in links
    relationships = reverse("admin:records_relationship_changelist")
    assert f"{relationships}?target__id__exact={hub.pk}" in links
    assert f"{relationships}?source__id__exact={hub.pk}" in links


def test_the_edit_form_holds_at_most_the_cap_of_link_rows_and_saves(admin_client_as_maya, hub):
    response = admin_client_as_maya.get(record_url(hub), {"edit": "1"})
    formsets = [f.formset for f in response.context["inline_admin_formsets"]]
    links = next(f for f in formsets if f.model is Relationship)
    assert links.initial_form_count() == LINK_LIMIT
    data = page_post_data(response)
    assert len(data) < 500  # far below Django's 1,000-field limit
    data.update(title="Center (renamed)", change_reason="Clearer name")

    saved = admin_client_as_maya.post(record_url(hub) + "?edit=1", data)

    assert saved.status_code == 302, saved.content.decode()[:2000]
    hub.refresh_from_db()
    assert hub.title == "Center (renamed)"
    assert Relationship.objects.filter(source=hub).count() == LINK_LIMIT + 10  # none lost
    assert Relationship.objects.filter(target=hub).count() == LINK_LIMIT + 10


def test_the_index_is_a_dashboard_of_what_waits_for_a_person(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held_update(hiring.kirat, {"stage": "offer"}, clarification="The user said offer.")
    page = admin_client_as_maya.get(reverse("admin:index")).content.decode()
    for panel in ("dashboard-queue", "dashboard-clarifications", "dashboard-recent"):
        assert f'id="{panel}"' in page
    assert "Writes awaiting your approval (1)" in page
    assert "update Kirat: stage = offer" in page
    assert "Recent agent changes" in page and "Created" in page
    diagnostics = page[page.index('id="diagnostics"') :]
    assert "Revision counters" in diagnostics and "Review tickets" in diagnostics
    assert "Revision counters" not in page[: page.index('id="diagnostics"')]


def test_the_dashboard_shows_only_the_persons_workspaces(teams):
    alpha, bravo = teams
    page = signed_in(alpha.staff).get(reverse("admin:index"))
    assert page.status_code == 200
    assert alpha.word in page.content.decode().lower()
    assert_nothing_of(bravo, page, "dashboard")


def test_a_staff_member_cannot_open_another_teams_record_page_or_its_edit_form(teams):
    alpha, bravo = teams
    client = signed_in(alpha.staff)
    assert client.get(record_url(bravo.kirat)).status_code == 404
    assert client.get(record_url(bravo.kirat), {"edit": "1"}).status_code == 404
    own = client.get(record_url(alpha.kirat))
    assert own.status_code == 200
    assert_nothing_of(bravo, own, "own record page")
