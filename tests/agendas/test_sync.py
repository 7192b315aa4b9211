"""Syncing outcomes to bound records: guarded, audited, never over a record that changed."""

from __future__ import annotations

from records import services
from records.models import AuditEvent, Record
from tests.agendas.helpers import driver
from tests.conftest import make_collection, make_record
from workflow.actions import approve_prepared_action, prepare_tool_batch
from workflow.models import PreparedAction
from workflow.resolution import resolve_by_ids


def start_bound(d, records) -> dict:
    result = d.ok(
        "agenda_start",
        {
            "title": "Open todos",
            "record_ids": [r.pk for r in records],
            "source_reference": "search_records on todos, status open",
        },
    )
    return d.acknowledge(result)


def test_sync_is_audited_through_prepared_actions_and_skips_archived_records(ctx):
    todos = make_collection(ctx, "todos")
    keep, gone = make_record(ctx, todos, "Write docs"), make_record(ctx, todos, "Old chore")
    d = driver()
    start_bound(d, [keep, gone])
    d.step("complete", "Docs written.")
    d.step("next")
    d.step("block", "Waiting for the old server to be retired.")
    services.record_archive(ctx=ctx, record_id=gone.pk, expected_version=1)
    d.ok("agenda_control", d.mine(action="finish", text="Done for now."))
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 1, "archived": 1}
    keep.refresh_from_db()
    assert keep.version == 2 and keep.data["agenda_outcome"]["state"] == "completed"
    assert "status" not in keep.data  # no status_values given: status is left alone
    event = AuditEvent.objects.get(record_id=keep.pk, kind="record.updated")
    assert event.action_id and event.review_evidence[0]["kind"] == "resolution"


def test_sync_waits_for_approval_and_reads_the_decision_later(ctx):
    todos = make_collection(ctx, "todos")
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=todos.pk, requires_approval=True
    )
    chore = make_record(ctx, todos, "Rotate keys")
    d = driver()
    start_bound(d, [chore])
    d.step("complete", "Keys rotated.")
    d.ok("agenda_control", d.mine(action="finish", text="All done."))
    waiting = d.ok("agenda_sync_records", d.mine())
    assert waiting["sync"]["counts"] == {"awaiting_approval": 1}
    assert waiting["sync_state"] == "pending"
    action_id = waiting["sync"]["results"][0]["action_id"]
    approve_prepared_action(action_id=action_id, reviewer="user:ana")
    done = d.ok("agenda_sync_records", d.mine())
    assert done["sync"]["counts"] == {"synced": 1} and done["sync_state"] == "synced"
    assert PreparedAction.objects.count() == 1  # the decision was read, not prepared again
    assert Record.objects.get(pk=chore.pk).data["agenda_outcome"]["conclusion"] == "Keys rotated."


def test_paused_sync_then_more_outcomes_need_another_sync(ctx):
    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, title) for title in ("One", "Two")]
    d = driver()
    start_bound(d, records)
    d.step("complete", "One done.")
    d.ok("agenda_control", d.mine(action="pause"))
    first = d.ok("agenda_sync_records", d.mine())
    assert first["sync"]["counts"] == {"synced": 1, "not_resolved": 1}
    assert first["sync_state"] == "pending"
    d.acknowledge(d.ok("agenda_control", d.mine(action="resume")))
    d.step("next")
    d.step("defer", "Two waits for the next sprint.")
    closed = d.ok("agenda_control", d.mine(action="finish", text="One done, two deferred."))
    assert closed["closure"]["sync_required"] is True
    second = d.ok("agenda_sync_records", d.mine())
    assert [r.get("earlier_sync", False) for r in second["sync"]["results"]] == [True, False]
    assert second["sync_state"] == "synced"


def test_an_abandoned_agenda_syncs_what_was_resolved(ctx):
    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, title) for title in ("One", "Two")]
    d = driver()
    start_bound(d, records)
    d.step("complete", "One done.")
    d.ok("agenda_control", d.mine(action="abandon", text="Priorities changed."))
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 1, "not_resolved": 1}
    assert synced["sync_state"] == "synced"


def test_an_unbound_agenda_has_nothing_to_sync(db):
    d = driver()
    d.ok("agenda_start", {"title": "x", "items": ["a"], "source_reference": "chat"})
    d.ok("agenda_control", d.mine(action="abandon", text="never mind"))
    d.refused("agenda_sync_records", d.mine(), "AGENDA_ORDER")
    d.refused("agenda_sync_records", d.mine(status_values={"open": "todo"}), "INVALID_INPUT")


def test_a_sync_of_100_bound_records_answers_in_under_16_kb(ctx):
    from tests.mcp_client import call_tool_raw

    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, f"Chore number {n} of the release") for n in range(100)]
    d = driver()
    start_bound(d, records)
    for number in range(100):
        d.step("complete", f"Chore {number} done and checked.")
        if number < 99:
            d.step("next")
    d.ok("agenda_control", d.mine(action="finish", text="All done."))
    result = call_tool_raw("agenda_sync_records", d.mine())
    size = len(result.content[0].text.encode())
    synced = result.structuredContent["result"]
    assert synced["sync"]["counts"] == {"synced": 100}
    assert size < 16 * 1024, f"the sync reply is {size} bytes"
    assert synced["sync"]["results_omitted"] == 100 and synced["sync"]["results"] == []
    assert Record.objects.filter(collection=todos, version=2).count() == 100


def finished_with_all_completed(d, records) -> None:
    start_bound(d, records)
    for number in range(len(records)):
        d.step("complete", f"Chore {number} done.")
        if number < len(records) - 1:
            d.step("next")
    d.ok("agenda_control", d.mine(action="finish", text="All done."))


def test_a_sync_writes_every_outcome_in_one_audited_batch(ctx):
    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, f"Chore {n}") for n in range(12)]
    d = driver()
    finished_with_all_completed(d, records)
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 12}
    assert all("batch_index" not in r for r in synced["sync"]["results"])
    action = PreparedAction.objects.get()
    assert action.operation == "batch" and len(action.arguments["items"]) == 12
    events = AuditEvent.objects.filter(kind="record.updated").order_by("item_index")
    assert [e.record_id for e in events] == [r.pk for r in records]
    assert {e.action_id for e in events} == {action.pk}
    assert [e.item_index for e in events] == list(range(12))
    for event, record in zip(events, records, strict=True):
        assert event.review_evidence[0]["kind"] == "resolution"
        assert event.review_evidence[0]["selected_record_id"] == record.pk
        assert event.decision_reason.startswith(f"Outcome of item {records.index(record) + 1} ")
    versions = Record.objects.filter(pk__in=[r.pk for r in records]).values_list("version")
    assert set(versions) == {(2,)}


def test_a_batch_held_by_a_gate_set_meanwhile_is_approved_once_and_read_for_every_item(
    ctx, monkeypatch
):
    """Outcomes for a gated collection are held one by one (tests/workflow/test_approval_gate);
    a gate set while the batch was prepared holds the batch whole, and a later sync reads
    that one decision for every item."""
    from workflow.agendas import sync

    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, f"Chore {n}") for n in range(3)]
    d = driver()
    finished_with_all_completed(d, records)
    prepared = prepare_tool_batch

    def gated_meanwhile(scope, items, collection_ids):
        services.collection_set_requires_approval(
            ctx=ctx, collection_id=todos.pk, requires_approval=True
        )
        return prepared(scope, items, collection_ids)

    monkeypatch.setattr(sync, "prepare_tool_batch", gated_meanwhile)
    waiting = d.ok("agenda_sync_records", d.mine())
    assert waiting["sync"]["counts"] == {"awaiting_approval": 3}
    assert len({r["action_id"] for r in waiting["sync"]["results"]}) == 1
    assert all(Record.objects.get(pk=r.pk).version == 1 for r in records)
    approve_prepared_action(action_id=waiting["sync"]["results"][0]["action_id"], reviewer="ana")
    done = d.ok("agenda_sync_records", d.mine())
    assert done["sync"]["counts"] == {"synced": 3} and done["sync_state"] == "synced"
    assert [r["record_version"] for r in done["sync"]["results"]] == [2, 2, 2]
    assert PreparedAction.objects.count() == 1
    for number, record in enumerate(records):
        stored = Record.objects.get(pk=record.pk).data["agenda_outcome"]
        assert stored["conclusion"] == f"Chore {number} done."


def test_a_record_written_while_the_batch_was_prepared_is_left_alone_and_the_rest_synced(
    ctx, monkeypatch
):
    """The batch cannot apply as a whole: nothing of it is written, and each item is tried on
    its own, from its record as it is now."""
    from workflow.agendas import sync

    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, f"Chore {n}") for n in range(3)]
    d = driver()
    finished_with_all_completed(d, records)
    reviewed = resolve_by_ids

    def reviewed_then_written_meanwhile(scope, record_ids):
        reviews = reviewed(scope, record_ids)
        services.record_update(
            ctx=ctx, record_id=records[1].pk, changes={"owner": "sam"}, expected_version=1
        )
        return reviews

    monkeypatch.setattr(sync, "resolve_by_ids", reviewed_then_written_meanwhile)
    synced = d.ok("agenda_sync_records", d.mine())
    assert [r["status"] for r in synced["sync"]["results"]] == ["synced", "changed", "synced"]
    assert synced["sync_state"] == "synced_with_conflicts"
    assert Record.objects.get(pk=records[1].pk).data == {"owner": "sam"}
    assert Record.objects.get(pk=records[0].pk).data["agenda_outcome"]["state"] == "completed"
    assert PreparedAction.objects.filter(state="stale").count() == 1  # the batch, not applied
    assert PreparedAction.objects.filter(state="committed", operation="update_record").count() == 2


def test_a_sync_names_the_credential_it_acted_through(ctx, monkeypatch):
    """Over HTTP an agent acts through a credential; the sync's batch carries it into the
    prepared action and every audit event, as any other write does."""
    from dataclasses import replace

    from workflow.agendas import sync

    todos = make_collection(ctx, "todos")
    records = [make_record(ctx, todos, f"Chore {n}") for n in range(2)]
    d = driver()
    finished_with_all_completed(d, records)
    prepared = prepare_tool_batch

    def through_a_token(scope, items, collection_ids):
        scope = replace(scope, credential="token:7", credential_name="laptop")
        return prepared(scope, items, collection_ids)

    monkeypatch.setattr(sync, "prepare_tool_batch", through_a_token)
    assert d.ok("agenda_sync_records", d.mine())["sync"]["counts"] == {"synced": 2}
    action = PreparedAction.objects.get()
    assert (action.credential, action.credential_name) == ("token:7", "laptop")
    events = AuditEvent.objects.filter(kind="record.updated", record_id__in=[r.pk for r in records])
    assert {(e.credential, e.credential_name) for e in events} == {("token:7", "laptop")}
