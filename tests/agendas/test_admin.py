"""The agenda admin: tree, conclusions, health and events render; nothing can be edited."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.agendas.helpers import driver, started
from workflow.models.agendas import Agenda, AgendaEvent, AgendaItem


@pytest.fixture
def client_as_maya(db, django_user_model) -> Client:
    maya = django_user_model.objects.create_superuser(
        username="maya", email="maya@example.com", password="correct horse battery"
    )
    client = Client()
    client.force_login(maya)
    return client


@pytest.fixture
def agenda_id(db) -> str:
    d = driver()
    started(d)
    d.step("complete", "Renamed <b>settings</b>.")
    d.step("revise", "Renamed settings to anchor_site.settings.")
    d.step("next")
    d.step("defer", "Waiting for the platform team.")
    return d.agenda_id


def test_change_page_shows_tree_conclusions_health_and_events(client_as_maya, agenda_id):
    url = reverse("admin:workflow_agenda_change", args=[agenda_id])
    page = client_as_maya.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "1. [completed] Rename the settings module" in html
    assert "2. [deferred] Drop Python 3.10" in html
    assert "Renamed &lt;b&gt;settings&lt;/b&gt;." in html  # escaped, and the first take is kept
    assert "healthy" in html
    assert "acknowledged" in html and "deferred" in html


def test_health_problems_show_on_the_page(client_as_maya, agenda_id):
    AgendaItem.objects.filter(layer__agenda_id=agenda_id, number=3).update(text="Changed")
    page = client_as_maya.get(reverse("admin:workflow_agenda_change", args=[agenda_id]))
    assert "frozen snapshot" in page.content.decode()
    assert "restore them before any repair" in page.content.decode()


def test_a_repairable_agenda_shows_the_hashes_to_repair_with(client_as_maya, agenda_id):
    from workflow.agendas.health import check_health

    Agenda.objects.filter(pk=agenda_id).update(closing_note="edited by hand")
    report = check_health(Agenda.objects.get(pk=agenda_id))
    page = client_as_maya.get(reverse("admin:workflow_agenda_change", args=[agenda_id]))
    html = page.content.decode()
    assert "agenda_repair" in html and report["state_hash"] in html
    assert report["event_log_hash"] in html


def test_lists_render_and_nothing_is_editable(client_as_maya, agenda_id):
    for name in ("agenda", "agendaevent"):
        listing = client_as_maya.get(reverse(f"admin:workflow_{name}_changelist"))
        assert listing.status_code == 200
        assert client_as_maya.get(reverse(f"admin:workflow_{name}_add")).status_code == 403
    event = AgendaEvent.objects.filter(agenda_id=agenda_id).first()
    assert event is not None
    assert (
        client_as_maya.get(reverse("admin:workflow_agendaevent_change", args=[event.pk]))
    ).status_code == 200
    before = Agenda.objects.get(pk=agenda_id).revision
    response = client_as_maya.post(
        reverse("admin:workflow_agenda_change", args=[agenda_id]), {"title": "Hijacked"}
    )
    assert response.status_code == 403
    assert Agenda.objects.get(pk=agenda_id).revision == before
