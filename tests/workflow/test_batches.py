"""Batch resolution and batch writes: one snapshot, in order, all or nothing, replayable."""

from __future__ import annotations

import pytest

from records.models import AuditEvent, Record
from tests.workflow.helpers import ok, refused, store_snapshot
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def test_batch_resolve_gives_each_item_its_own_ticket(hiring):
    result = ok(
        "batch_resolve_records",
        {
            "requests": [
                {"query": "Kirat", "collection_id": hiring.people.pk},
                {"query": "Rahul"},
                {"query": ""},
            ]
        },
    )
    first, second, third = result["items"]
    assert first["result"]["selected_record_id"] == hiring.kirat.pk
    assert second["result"]["status"] == "needs_clarification"
    assert first["result"]["resolution_id"] != second["result"]["resolution_id"]
    assert "result" not in third and third["error"]["code"] == "INVALID_INPUT"


def comparable(reply):
    """A resolution reply without what differs between any two tickets, nor its next step (a
    batch gives each once)."""
    return {k: v for k, v in reply.items() if k not in {"resolution_id", "expires_at", "next_step"}}


def test_batch_resolve_answers_each_item_as_resolve_record_does(hiring, ctx):
    from records import services
    from records.services import WriteContext
    from tests.conftest import make_collection, make_record
    from workflow.models import ReviewTicket

    services.workspace_ensure("elsewhere")
    other = WriteContext(workspace_id="elsewhere", actor_id="someone", decision_reason="setup")
    foreign = make_record(other, make_collection(other, "people"), "Kirat")
    services.relationship_create(
        ctx=ctx,
        source_id=hiring.kirat.pk,
        target_id=hiring.backend.pk,
        relationship_type="applied_to",
    )
    requests = [
        {"query": hiring.kirat.pk},
        {"query": hiring.backend.pk, "collection_id": hiring.people.pk},  # ID outside the scope
        {"query": "Kriat", "collection_id": hiring.people.pk},
        {"query": "Rahul"},
        {"query": "me"},
        {"query": "Nobody Here"},
        {"query": hiring.kirat.pk, "context_record_ids": [hiring.backend.pk]},
        {"query": foreign.pk},  # another workspace's record is no record here
    ]
    batch = ok("batch_resolve_records", {"requests": requests})["items"]
    singles = [ok("resolve_record", request) for request in requests]
    assert [comparable(item["result"]) for item in batch] == [comparable(s) for s in singles]
    steps = [single.get("next_step") for single in singles]
    once = [step if step not in steps[:n] else None for n, step in enumerate(steps)]
    assert [item["result"].get("next_step") for item in batch] == once, "each next step once"
    assert batch[-1]["result"]["status"] == "no_match" and "candidates" not in batch[-1]["result"]
    for item, single in zip(batch, singles, strict=True):
        kept = ReviewTicket.objects.get(pk=item["result"]["resolution_id"])
        alone = ReviewTicket.objects.get(pk=single["resolution_id"])
        assert (kept.request, kept.answer, kept.counters) == (
            alone.request,
            alone.answer,
            alone.counters,
        )


def test_batch_resolve_of_ids_reads_once_for_all_items(hiring, ctx):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.conftest import make_record

    records = [make_record(ctx, hiring.openings, f"Role {i}") for i in range(10)]

    def queries(count):
        requests = [{"query": r.pk} for r in records[:count]]
        with CaptureQueriesContext(connection) as captured:
            items = ok("batch_resolve_records", {"requests": requests})["items"]
        assert [i["result"]["selected_record_id"] for i in items] == [r.pk for r in records[:count]]
        return len(captured)

    # The records, their links, the counters and the tickets are read and written once for the
    # batch: ten items cost what two do, not five times as much.
    assert queries(10) == queries(2)


def update(record, version, resolution_id, **changes):
    return {
        "operation": "update_record",
        "arguments": {"record_id": record.pk, "changes": changes, "expected_version": version},
        "review_ids": [resolution_id],
        "decision_reason": f"update {record.title}",
    }


def test_batch_commit_reads_its_records_once_for_all_items(hiring, ctx):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.conftest import make_record

    records = [make_record(ctx, hiring.openings, f"Role {i}") for i in range(12)]

    def record_reads(chosen):
        resolved = ok("batch_resolve_records", {"requests": [{"query": r.pk} for r in chosen]})
        actions = [
            update(r, 1, item["result"]["resolution_id"], n=i)
            for i, (r, item) in enumerate(zip(chosen, resolved["items"], strict=True))
        ]
        prepared = ok("prepare_batch_write", {"actions": actions})
        with CaptureQueriesContext(connection) as captured:
            ok("commit_batch_write", {"action_id": prepared["action_id"]})
        return [q["sql"] for q in captured if q["sql"].startswith('SELECT "records_record"')]

    # Every item's check finds its record in one read for the batch: ten items read the
    # records as often as two do, not once more each.
    assert len(record_reads(records[2:])) == len(record_reads(records[:2]))


def test_three_updates_in_three_calls(hiring):
    resolved = ok(
        "batch_resolve_records",
        {
            "requests": [
                {"query": name, "collection_id": hiring.people.pk} for name in ("Kirat", "Abhishek")
            ]
            + [{"query": "Junior Backend", "collection_id": hiring.openings.pk}]
        },
    )
    ids = [item["result"]["resolution_id"] for item in resolved["items"]]
    prepared = ok(
        "prepare_batch_write",
        {
            "actions": [
                update(hiring.kirat, 1, ids[0], stage="offer"),
                update(hiring.abhishek, 1, ids[1], stage="rejected"),
                update(hiring.backend, 1, ids[2], status="closed"),
            ]
        },
    )
    committed = ok("commit_batch_write", {"action_id": prepared["action_id"]})
    made = committed["result"]["items"]
    assert made == [{"record": {"version": 2}}] * 3, "in order, unnumbered; the IDs were sent"
    assert Record.objects.get(pk=hiring.backend.pk).data["status"] == "closed"
    events = AuditEvent.objects.filter(action_id=prepared["action_id"])
    assert list(events.order_by("item_index").values_list("item_index", flat=True)) == [0, 1, 2]
    again = ok("commit_batch_write", {"action_id": prepared["action_id"]})
    assert again["replayed"] is True and events.count() == 3


def test_two_writes_to_one_record_need_successive_versions(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    rid = review["resolution_id"]
    refused(
        "prepare_batch_write",
        {"actions": [update(hiring.kirat, 1, rid, a=1), update(hiring.kirat, 1, rid, b=2)]},
        "VERSION_CONFLICT",
    )
    prepared = ok(
        "prepare_batch_write",
        {"actions": [update(hiring.kirat, 1, rid, a=1), update(hiring.kirat, 2, rid, b=2)]},
    )
    ok("commit_batch_write", {"action_id": prepared["action_id"]})
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.version == 3 and kirat.data["a"] == 1 and kirat.data["b"] == 2


def test_failure_in_item_seven_of_ten_rolls_back_everything(hiring, ctx):
    from records import services
    from tests.conftest import make_record

    records = [make_record(ctx, hiring.openings, f"Role {i}") for i in range(10)]
    resolved = ok("batch_resolve_records", {"requests": [{"query": r.pk} for r in records]})
    actions = [
        update(r, 1, item["result"]["resolution_id"], n=i)
        for i, (r, item) in enumerate(zip(records, resolved["items"], strict=True))
    ]
    prepared = ok("prepare_batch_write", {"actions": actions})
    # Someone edits record 7 before the commit: that item can no longer apply.
    services.record_update(
        ctx=ctx, record_id=records[6].pk, changes={"edited": True}, expected_version=1
    )
    before = store_snapshot()
    error = refused("commit_batch_write", {"action_id": prepared["action_id"]}, "VERSION_CONFLICT")
    assert "actions[6]" in error["message"] and error["details"]["item_index"] == 6
    assert store_snapshot() == before
    assert not AuditEvent.objects.filter(action_id=prepared["action_id"]).exists()


def test_batch_refuses_collection_changes_and_names_the_item(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    error = refused(
        "prepare_batch_write",
        {
            "actions": [
                update(hiring.kirat, 1, review["resolution_id"], a=1),
                {
                    "operation": "create_collection",
                    "arguments": {},
                    "review_ids": [],
                    "decision_reason": "x",
                },
            ]
        },
        "INVALID_INPUT",
    )
    assert "actions[1].operation" in error["message"]


def test_batch_items_are_checked_against_one_snapshot(hiring):
    # Linking changes links:<record>, which the second item's review depends on; both were
    # reviewed before the batch, so both are checked against that pre-write snapshot.
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    opening = ok(
        "resolve_record", {"query": "Senior Frontend", "collection_id": hiring.openings.pk}
    )
    prepared = ok(
        "prepare_batch_write",
        {
            "actions": [
                {
                    "operation": "link_records",
                    "arguments": {
                        "source_id": hiring.kirat.pk,
                        "relationship_type": "referred_for",
                        "target_id": hiring.frontend.pk,
                    },
                    "review_ids": [kirat["resolution_id"], opening["resolution_id"]],
                    "decision_reason": "referral",
                },
                update(hiring.kirat, 1, kirat["resolution_id"], referred=True),
            ]
        },
    )
    assert ok("commit_batch_write", {"action_id": prepared["action_id"]})["status"] == "committed"


def test_an_action_is_committed_only_by_its_own_kinds_commit_tool(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    batch = ok(
        "prepare_batch_write", {"actions": [update(hiring.kirat, 1, review["resolution_id"], a=1)]}
    )
    before = store_snapshot()
    for tool in ("commit_write", "commit_import"):
        error = refused(tool, {"action_id": batch["action_id"]}, "INVALID_INPUT")
        assert "commit it with commit_batch_write" in error["message"]
    assert store_snapshot() == before
    assert ok("commit_batch_write", {"action_id": batch["action_id"]})["status"] == "committed"
