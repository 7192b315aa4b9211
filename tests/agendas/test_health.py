"""The health check: a clean agenda is healthy; edits outside the tools are reported; read-only."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.agendas.helpers import database_snapshot, driver, started
from workflow.models.agendas import Agenda, AgendaEvent, AgendaItem


def health(d) -> dict:
    return d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})


def worked_agenda():
    d = driver()
    started(d)
    d.step("complete", "Renamed to anchor_site.settings.")
    d.step("next")
    child = d.ok(
        "agenda_open_layer",
        d.mine(kind="child", items=["CI matrix", "classifiers"], source_reference="notes"),
    )
    d.acknowledge(child)
    return d


def test_a_worked_agenda_is_healthy_and_checking_changes_nothing(db):
    d = worked_agenda()
    before = database_snapshot()
    report = health(d)
    assert report["healthy"], report["problems"]
    assert report["event_count"] == report["revision"] == 6
    assert len(report["state_hash"]) == len(report["event_log_hash"]) == 64
    assert database_snapshot() == before
    assert health(d) == report


def test_a_row_changed_outside_the_tools_breaks_the_seal(db):
    d = worked_agenda()
    AgendaItem.objects.filter(layer__agenda_id=d.agenda_id, number=1, layer__depth=0).update(
        conclusion="Quietly rewritten"
    )
    problems = health(d)["problems"]
    assert any(p.startswith("seal:") for p in problems), problems
    assert any("not its latest recorded revision" in p for p in problems), problems


def test_a_reordered_snapshot_is_reported(db):
    d = worked_agenda()
    items = AgendaItem.objects.filter(layer__agenda_id=d.agenda_id, layer__depth=0)
    first, third = items.get(number=1), items.get(number=3)
    items.filter(pk=first.pk).update(text=third.text)
    items.filter(pk=third.pk).update(text=first.text)
    problems = health(d)["problems"]
    assert any("frozen snapshot" in p for p in problems), problems


def _raw(sql: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_altered_and_missing_events_break_the_chain(db):
    d = worked_agenda()
    table = AgendaEvent._meta.db_table
    event = AgendaEvent.objects.get(agenda_id=d.agenda_id, sequence=3)
    _raw(f"UPDATE {table} SET kind = %s WHERE id = %s", ["tampered", event.pk])
    problems = health(d)["problems"]
    assert any("event #3" in p and "altered" in p for p in problems), problems

    _raw(f"DELETE FROM {table} WHERE agenda_id = %s AND sequence = %s", [d.agenda_id, 2])
    problems = health(d)["problems"]
    assert any("expected event #2" in p for p in problems), problems
    assert any("does not link" in p for p in problems), problems


def test_a_broken_stack_is_reported(db):
    d = worked_agenda()
    Agenda.objects.filter(pk=d.agenda_id).update(status=Agenda.FINISHED)
    problems = health(d)["problems"]
    assert any("lists are still active" in p for p in problems), problems


def test_events_are_append_only(db):
    d = worked_agenda()
    event = AgendaEvent.objects.filter(agenda_id=d.agenda_id).first()
    assert event is not None
    for attempt in (event.save, event.delete):
        with pytest.raises(ValueError, match="append-only"):
            attempt()


def test_abandoning_inside_a_child_list_stays_healthy(db):
    d = worked_agenda()
    closed = d.ok("agenda_control", d.mine(action="abandon", text="Out of time."))
    numbers = [u["number"] for u in closed["closure"]["unresolved"]]
    assert numbers == ["2", "3", "2.1", "2.2"]
    report = health(d)
    assert report["healthy"], report["problems"]
