"""One record, one agenda at a time: records an open or unsynced agenda holds cannot be bound
again, and a new agenda shows why a record was deferred or blocked the last time."""

from __future__ import annotations

from tests.agendas.helpers import driver
from tests.agendas.test_sync import start_bound
from tests.conftest import make_collection, make_record


def try_start(d, records, code: str = "RECORD_HELD") -> dict:
    """A second agenda binding these records: refused, nothing changes (d holds the first)."""
    return d.refused(
        "agenda_start",
        {
            "title": "Second pass",
            "record_ids": [r.pk for r in records],
            "source_reference": "search_records on todos",
        },
        code,
    )


def test_records_of_an_open_or_unsynced_agenda_cannot_be_bound_again(ctx):
    todos = make_collection(ctx, "todos")
    one, two, three = (make_record(ctx, todos, t) for t in ("One", "Two", "Three"))
    d = driver()
    start_bound(d, [one, two])
    first_id = d.agenda_id
    error = try_start(d, [three, two])
    assert error["details"]["field"] == "record_ids[1]"
    assert error["details"]["held_by"] == {
        "agenda_id": first_id,
        "title": "Open todos",
        "status": "active",
    }
    assert first_id in error["message"] and "'Open todos'" in error["message"]
    assert "agenda_sync_records" in error["message"]

    d.step("complete", "One done.")
    d.ok("agenda_control", d.mine(action="pause"))
    try_start(d, [one])  # paused is unfinished
    d.acknowledge(d.ok("agenda_control", d.mine(action="resume")))
    d.step("next")
    d.step("defer", "Two waits for the design review.")
    d.ok("agenda_control", d.mine(action="finish", text="One done, two deferred."))
    error = try_start(d, [one])  # finished, but its outcomes have not reached the records
    assert "not synced" in error["message"]

    d.ok("agenda_sync_records", d.mine())
    second = d.ok(
        "agenda_start",
        {
            "title": "Second pass",
            "record_ids": [two.pk, three.pk],
            "source_reference": "search_records on todos",
        },
    )
    # The earlier agenda's reason is carried onto the new item and shown with it.
    assert second["current_item"]["earlier"] == {
        "state": "deferred",
        "reason": "Two waits for the design review.",
        "agenda_id": first_id,
        "agenda": "Open todos",
    }
    text = second["whole_picture"]["text"]
    assert "1. [current] Two (earlier deferred: Two waits for the design review.)" in text
    assert "2. [open] Three\n" in text + "\n"  # Three was never deferred
    health = d.ok("agenda_view", {"agenda_id": second["agenda_id"], "view": "health"})
    assert health["healthy"], health["problems"]


def test_an_abandoned_agenda_holds_only_outcomes_it_has_not_synced(ctx):
    todos = make_collection(ctx, "todos")
    one, two = make_record(ctx, todos, "One"), make_record(ctx, todos, "Two")
    d = driver()
    start_bound(d, [one, two])
    d.step("block", "One is blocked on the vendor.")
    d.ok("agenda_control", d.mine(action="abandon", text="Priorities changed."))
    try_start(d, [one])  # blocked, not synced yet
    fresh = d.ok(
        "agenda_start", {"title": "Two", "record_ids": [two.pk], "source_reference": "todos"}
    )
    assert "earlier" not in fresh["current_item"]  # two was never resolved


def test_an_earlier_completed_outcome_is_not_carried(ctx):
    todos = make_collection(ctx, "todos")
    one = make_record(ctx, todos, "One")
    d = driver()
    start_bound(d, [one])
    d.step("block", "Vendor.")
    d.step("revisit", item_number=1)
    d.step("complete", "Vendor answered.")
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    d.ok("agenda_sync_records", d.mine())
    again = d.ok(
        "agenda_start", {"title": "Again", "record_ids": [one.pk], "source_reference": "todos"}
    )
    assert "earlier" not in again["current_item"]
    assert "(earlier" not in again["whole_picture"]["text"]
