"""Outcomes that move after a sync (a revised conclusion, a later synthesis, a revisited item)
reach the bound record on the next sync, and a sync with nothing new writes nothing."""

from __future__ import annotations

from records import services
from records.models import Record
from tests.agendas.helpers import driver
from tests.agendas.test_sync import start_bound
from tests.conftest import make_collection, make_record
from tests.workflow.helpers import store_snapshot
from workflow.actions import approve_prepared_action


def outcome(record: Record) -> dict:
    record.refresh_from_db()
    return record.data["agenda_outcome"]


def pause_sync_resume(d) -> dict:
    d.ok("agenda_control", d.mine(action="pause"))
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync_state"] in ("pending", "synced"), synced
    d.acknowledge(d.ok("agenda_control", d.mine(action="resume")))
    return synced


def assert_second_sync_writes_nothing(d) -> None:
    before = store_snapshot()
    again = d.ok("agenda_sync_records", d.mine())
    assert all(r.get("earlier_sync") for r in again["sync"]["results"]), again["sync"]
    assert again["sync_state"] == "synced"
    assert store_snapshot() == before


def test_a_conclusion_revised_after_a_sync_reaches_the_record(ctx):
    todos = make_collection(ctx, "todos")
    one, two = make_record(ctx, todos, "One"), make_record(ctx, todos, "Two")
    d = driver()
    start_bound(d, [one, two])
    d.step("complete", "One: first take.")
    first = pause_sync_resume(d)
    assert first["sync"]["counts"] == {"synced": 1, "not_resolved": 1}
    assert outcome(one)["conclusion"] == "One: first take."

    revised = d.step("revise", "One: second take, after a look at the logs.")
    assert revised["sync_state"] == "pending"  # the agenda says there is something to sync
    d.step("next")
    d.step("complete", "Two done.")
    closed = d.ok("agenda_control", d.mine(action="finish", text="Both done."))
    assert closed["closure"]["sync_required"] is True
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 2}
    assert not any(r.get("earlier_sync") for r in synced["sync"]["results"])
    assert outcome(one)["conclusion"] == "One: second take, after a look at the logs."
    assert one.version == 3  # created, first sync, second sync: each through commit_write
    assert_second_sync_writes_nothing(d)


def test_a_parent_synthesis_given_after_a_sync_reaches_the_record(ctx):
    todos = make_collection(ctx, "todos")
    auth = make_record(ctx, todos, "Split the auth module")
    d = driver()
    start_bound(d, [auth])
    d.step("complete", "Split it in two.")
    pause_sync_resume(d)
    child = d.ok(
        "agenda_open_layer",
        d.mine(kind="child", items=["Session part", "Token part"], source_reference="notes"),
    )
    d.acknowledge(child)
    d.step("complete", "Session code moves to auth.session.")
    d.step("next")
    d.step("complete", "Token code moves to auth.tokens.")
    d.acknowledge(d.ok("agenda_return", d.mine(outcome="Two modules.")))
    synthesis = d.step("revise", "Split into auth.session and auth.tokens.")
    assert synthesis["sync_state"] == "pending"
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 1}
    assert outcome(auth)["conclusion"] == "Split into auth.session and auth.tokens."
    assert_second_sync_writes_nothing(d)


def test_a_revision_while_a_write_awaits_approval_follows_it(ctx):
    todos = make_collection(ctx, "todos")
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=todos.pk, requires_approval=True
    )
    keys = make_record(ctx, todos, "Rotate keys")
    d = driver()
    start_bound(d, [keys])
    d.step("complete", "Rotated the API keys.")
    waiting = pause_sync_resume(d)
    assert waiting["sync"]["counts"] == {"awaiting_approval": 1}
    d.step("revise", "Rotated the API and database keys.")
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    approve_prepared_action(action_id=waiting["sync"]["results"][0]["action_id"], reviewer="ana")
    # The approved write lands, and the revision is sent after it (again for approval).
    second = d.ok("agenda_sync_records", d.mine())
    assert second["sync"]["counts"] == {"awaiting_approval": 1}
    assert outcome(keys)["conclusion"] == "Rotated the API keys."
    approve_prepared_action(action_id=second["sync"]["results"][0]["action_id"], reviewer="ana")
    third = d.ok("agenda_sync_records", d.mine())
    assert third["sync"]["counts"] == {"synced": 1} and third["sync_state"] == "synced"
    assert outcome(keys)["conclusion"] == "Rotated the API and database keys."
    assert_second_sync_writes_nothing(d)


def test_a_revisited_item_syncs_its_new_outcome(ctx):
    todos = make_collection(ctx, "todos")
    docs = make_record(ctx, todos, "Write docs")
    d = driver()
    start_bound(d, [docs])
    d.step("defer", "Waiting for the API to settle.")
    pause_sync_resume(d)
    assert outcome(docs)["state"] == "deferred"
    d.step("revisit", item_number=1)
    d.step("complete", "Docs written after all.")
    d.ok("agenda_control", d.mine(action="finish", text="Done."))
    d.ok("agenda_sync_records", d.mine(status_values={"completed": "done"}))
    docs.refresh_from_db()
    assert docs.data["status"] == "done"
    assert docs.data["agenda_outcome"]["state"] == "completed"
    assert "reason" not in docs.data["agenda_outcome"]  # the old reason is history, not outcome
    assert_second_sync_writes_nothing(d)
