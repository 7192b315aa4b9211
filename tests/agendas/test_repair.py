"""A broken agenda moves no further until it is explicitly repaired, with the inspected hashes
and a reason; the repair refuses healthy chains, stale hashes and unsound lists."""

from __future__ import annotations

from django.db import connection

from tests.agendas.helpers import driver, started
from tests.conftest import make_collection, make_record
from workflow.models.agendas import Agenda, AgendaEvent, AgendaItem

EVENTS = AgendaEvent._meta.db_table
OTHER_HASH = "0" * 64


def tamper_event(agenda_id: str, sequence: int) -> None:
    event = AgendaEvent.objects.get(agenda_id=agenda_id, sequence=sequence)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {EVENTS} SET kind = %s WHERE id = %s", ["tampered", event.pk])


def health(d) -> dict:
    return d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})


def repair_args(d, report: dict, **changes) -> dict:
    return {
        "agenda_id": d.agenda_id,
        "expected_state_hash": report["state_hash"],
        "expected_event_log_hash": report["event_log_hash"],
        "reason": "An old script rewrote event 2's kind; the agenda itself is right.",
        **changes,
    }


def broken_agenda():
    d = driver()
    started(d)
    d.step("complete", "Renamed.")
    tamper_event(d.agenda_id, 2)
    return d


def test_every_mutation_is_refused_on_a_broken_chain(db):
    d = broken_agenda()
    report = health(d)
    assert not report["healthy"] and report["repairable"], report
    for name, arguments in [
        ("agenda_step", d.mine(action="next")),
        ("agenda_step", d.mine(action="revise", text="Renamed again.")),
        ("agenda_open_layer", d.mine(kind="interruption", items=["x"], source_reference="y")),
        ("agenda_control", d.mine(action="pause")),
        ("agenda_control", d.mine(action="abandon", text="give up")),
        ("agenda_control", d.mine(action="present")),
    ]:
        error = d.refused(name, arguments, "AGENDA_UNHEALTHY", healthy=False)
        assert "agenda_repair" in error["message"] and "never repaired" in error["message"]
        assert error["details"]["expected_state_hash"] == report["state_hash"]
        assert error["details"]["expected_event_log_hash"] == report["event_log_hash"]
        assert any("event #2" in p for p in error["details"]["problems"])


def test_a_sync_is_refused_on_a_broken_chain(ctx):
    todos = make_collection(ctx, "todos")
    chore = make_record(ctx, todos, "Chore")
    d = driver()
    d.acknowledge(
        d.ok("agenda_start", {"title": "t", "record_ids": [chore.pk], "source_reference": "s"})
    )
    d.step("complete", "Done.")
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    tamper_event(d.agenda_id, 3)
    d.refused("agenda_sync_records", d.mine(), "AGENDA_UNHEALTHY", healthy=False)
    chore.refresh_from_db()
    assert chore.version == 1


def test_repair_refuses_healthy_chains_stale_hashes_and_bad_arguments(db):
    d = driver()
    started(d)
    healthy = health(d)
    d.refused("agenda_repair", repair_args(d, healthy), "AGENDA_ORDER")

    tamper_event(d.agenda_id, 2)
    report = health(d)
    stale = [
        repair_args(d, report, expected_event_log_hash=healthy["event_log_hash"]),
        repair_args(d, report, expected_state_hash=OTHER_HASH),
        repair_args(d, report, expected_event_log_hash=OTHER_HASH),
    ]
    assert healthy["event_log_hash"] != report["event_log_hash"]  # the log hash covers event 2
    for arguments in stale:
        d.refused("agenda_repair", arguments, "STALE_HASHES", healthy=False)
    for arguments in (
        repair_args(d, report, reason="\u200b "),
        repair_args(d, report, expected_state_hash="abc"),
        repair_args(d, report, expected_event_log_hash=report["event_log_hash"].upper()),
    ):
        d.refused("agenda_repair", arguments, "INVALID_INPUT", healthy=False)

    # A hash inspected before a further change is stale too.
    tamper_event(d.agenda_id, 1)
    d.refused("agenda_repair", repair_args(d, report), "STALE_HASHES", healthy=False)


def test_repair_refuses_unsound_lists(db):
    d = driver()
    started(d)
    AgendaItem.objects.filter(layer__agenda_id=d.agenda_id, number=2).update(text="Reworded")
    report = health(d)
    assert not report["repairable"]
    error = d.refused("agenda_step", d.mine(action="next"), "AGENDA_UNHEALTHY", healthy=False)
    assert error["details"]["repairable"] is False
    d.refused("agenda_repair", repair_args(d, report), "AGENDA_UNHEALTHY", healthy=False)


def test_an_explicit_repair_is_recorded_and_the_agenda_moves_again(db):
    d = broken_agenda()
    report = health(d)
    repaired = d.ok("agenda_repair", repair_args(d, report))
    assert repaired["repaired"]["problems"] == report["problems"]
    assert repaired["revision"] == report["revision"] + 1
    event = AgendaEvent.objects.get(agenda_id=d.agenda_id, sequence=repaired["revision"])
    assert event.kind == "repaired" and event.actor_id
    assert event.payload["reason"].startswith("An old script")
    assert event.payload["repaired_event_log_hash"] == report["event_log_hash"]
    after = health(d)
    assert after["healthy"], after["problems"]

    # The repaired picture is shown and acknowledged like any other; then work goes on.
    d.refused("agenda_step", d.mine(action="next"), "PRESENTATION_REQUIRED")
    d.acknowledge(repaired)
    d.step("next")
    d.step("complete", "Dropped 3.10.")
    assert health(d)["healthy"]
    d.refused("agenda_repair", repair_args(d, health(d)), "AGENDA_ORDER")  # healthy again

    # History before the repair is accepted only as it stood: changing it breaks the chain.
    tamper_event(d.agenda_id, 1)
    problems = health(d)["problems"]
    assert any("before the repair" in p for p in problems), problems


def test_rows_changed_outside_the_tools_are_resealed_only_on_request(db):
    d = driver()
    started(d)
    Agenda.objects.filter(pk=d.agenda_id).update(title="Release chores (renamed by hand)")
    report = health(d)
    assert report["repairable"] and report["problems"][0].startswith("seal:")
    d.refused("agenda_step", d.mine(action="complete", text="x"), "AGENDA_UNHEALTHY", healthy=False)
    d.ok("agenda_repair", repair_args(d, report, reason="The user renamed it in the database."))
    assert health(d)["healthy"]
