"""The check every agenda command runs first: the event log from the verified head on.

What it promises (workflow.agendas.health.check_health, from_head): events after the head are
re-hashed by the next command; an event changed, removed or slipped in at or before the head
clears the head (database triggers), so the next command checks the whole log again; the full
check (the health view, the admin, a repair) always re-hashes everything.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import connection

from tests.agendas.helpers import driver, started
from workflow.agendas import health as health_module
from workflow.agendas.health import event_hash
from workflow.models.agendas import Agenda, AgendaEvent

EVENTS = AgendaEvent._meta.db_table


def health(d) -> dict:
    return d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})


def head(d) -> tuple[int, str]:
    agenda = Agenda.objects.get(pk=d.agenda_id)
    return agenda.verified_sequence, agenda.verified_hash


def set_kind(d, sequence: int, kind: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {EVENTS} SET kind = %s WHERE agenda_id = %s AND sequence = %s",
            [kind, d.agenda_id, sequence],
        )


def worked(steps: int):
    d = driver()
    started(d, [f"Chore {n}" for n in range(steps)])
    for number in range(steps):
        d.step("complete", f"Chore {number} done.")
        if number < steps - 1:
            d.step("next")
    return d


def test_each_command_makes_the_event_it_sealed_the_head(db):
    d = worked(3)
    last = AgendaEvent.objects.filter(agenda_id=d.agenda_id).order_by("-sequence").first()
    assert last is not None and head(d) == (last.sequence, last.event_hash)


def test_a_command_rehashes_the_events_since_the_head_not_the_whole_log(db, monkeypatch):
    d = worked(15)
    assert head(d)[0] == 31
    hashed = []
    real = event_hash

    def counted(event):
        hashed.append(event.sequence)
        return real(event)

    monkeypatch.setattr(health_module, "event_hash", counted)
    d.ok("agenda_control", d.mine(action="finish", text="All done."))
    assert hashed == [31]  # the head, re-hashed; nothing before it
    hashed.clear()
    assert health(d)["healthy"]
    assert hashed == list(range(1, 33))  # the full check: every event


def test_an_event_slipped_in_after_the_head_is_caught_by_the_next_command(db):
    d = worked(2)
    last = AgendaEvent.objects.filter(agenda_id=d.agenda_id).order_by("-sequence").first()
    assert last is not None
    AgendaEvent.objects.create(
        agenda_id=d.agenda_id,
        sequence=last.sequence + 1,
        kind="advanced",
        actor_id="someone else",
        payload={},
        state_hash=last.state_hash,
        previous_hash=last.event_hash,
        event_hash="0" * 64,  # not the hash of its content
        created_at=last.created_at + timedelta(seconds=1),
    )
    Agenda.objects.filter(pk=d.agenda_id).update(revision=last.sequence + 1)
    assert head(d)[0] == last.sequence  # appended after the head: the head stands
    error = d.refused(
        "agenda_control", d.mine(action="finish", text="x"), "AGENDA_UNHEALTHY", healthy=False
    )
    assert any(f"event #{last.sequence + 1}" in p for p in error["details"]["problems"])


def test_changing_or_removing_an_event_before_the_head_clears_it(db):
    d = worked(3)
    set_kind(d, 2, "tampered")
    assert head(d) == (0, "")
    error = d.refused("agenda_step", d.mine(action="next"), "AGENDA_UNHEALTHY", healthy=False)
    assert any("event #2" in p for p in error["details"]["problems"])

    other = worked(3)
    AgendaEvent.objects.filter(agenda_id=other.agenda_id, sequence=3).delete()
    assert head(other) == (0, "")
    other.refused("agenda_step", other.mine(action="next"), "AGENDA_UNHEALTHY", healthy=False)


def test_an_edit_before_the_head_that_also_restores_the_head_is_left_to_the_full_check(db):
    """The limit of the command's check: an edit made behind the triggers' back (here the
    head is written back after the edit) is not re-hashed by a command; the full check, in the
    health view, still reports it."""
    d = worked(3)
    verified = head(d)
    set_kind(d, 2, "tampered")
    Agenda.objects.filter(pk=d.agenda_id).update(
        verified_sequence=verified[0], verified_hash=verified[1]
    )
    d.ok("agenda_control", d.mine(action="pause"))
    report = health(d)
    assert not report["healthy"]
    assert any("event #2" in p and "altered" in p for p in report["problems"])


def test_an_agenda_without_a_head_is_checked_in_full_and_then_has_one(db):
    d = worked(2)
    Agenda.objects.filter(pk=d.agenda_id).update(verified_sequence=0, verified_hash="")
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    last = AgendaEvent.objects.filter(agenda_id=d.agenda_id).order_by("-sequence").first()
    assert last is not None and head(d) == (last.sequence, last.event_hash)
