"""One approval gate at every write door, over every collection a write touches.

`people` needs a person's approval; `applications` does not. Each door writes to `applications`
and reaches `people` only through a secondary path: a link endpoint, a batch item, an import
link to an existing record, an agenda outcome for a bound record. Every such write must wait,
write nothing until a person approves, and apply on approval; with nothing gated it commits at
once; and a collection gated between prepare and commit holds the commit. The doors are driven
through the MCP tools, as a client calls them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection, transaction

from records import approval, services
from records.errors import AnchorError
from records.models import AuditEvent, Record, Relationship
from tests.agendas.helpers import driver
from tests.conftest import Hiring
from tests.polling import lock_waiters, wait_until
from tests.workflow.helpers import ok, store_snapshot
from workflow.actions import approve_prepared_action
from workflow.models import ActionState, PreparedAction
from workflow.names import cache as names_cache

IMPORTED = "Rohan Mehta application"


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def gate(ctx, collection, requires_approval: bool = True) -> None:
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=collection.pk, requires_approval=requires_approval
    )


def written() -> dict[str, Any]:
    """Every row a write could add or change. A counter row at 0 is a lock target created by a
    commit's recheck (a counter with no row is 0 too), not a write."""
    snapshot = store_snapshot()
    snapshot["counters"] = [c for c in snapshot["counters"] if c[2]]
    return snapshot


def review(record: Record) -> str:
    return ok("resolve_record", {"query": record.pk})["resolution_id"]


@dataclass
class Door:
    prepare: Callable[[], dict[str, Any]]
    commit_tool: str
    applied: Callable[[], bool]


def link_door(h: Hiring) -> Door:
    """prepare_write link_records from an application to a person: the target is gated."""

    def prepare() -> dict[str, Any]:
        return ok(
            "prepare_write",
            {
                "operation": "link_records",
                "arguments": {
                    "source_id": h.abhishek_backend.pk,
                    "relationship_type": "referred_by",
                    "target_id": h.kirat.pk,
                },
                "review_ids": [review(h.abhishek_backend), review(h.kirat)],
                "decision_reason": "Kirat referred Abhishek",
            },
        )

    return Door(
        prepare,
        "commit_write",
        lambda: Relationship.objects.filter(
            source=h.abhishek_backend, relationship_type="referred_by", target=h.kirat
        ).exists(),
    )


def unlink_door(h: Hiring) -> Door:
    """prepare_write unlink_records of application -> person: the link's target is gated."""
    rel = Relationship.objects.get(source=h.kirat_backend, target=h.kirat)

    def prepare() -> dict[str, Any]:
        return ok(
            "prepare_write",
            {
                "operation": "unlink_records",
                "arguments": {"relationship_id": rel.pk},
                "review_ids": [review(h.kirat_backend), review(h.kirat)],
                "decision_reason": "The application was filed under the wrong person",
            },
        )

    return Door(
        prepare, "commit_write", lambda: not Relationship.objects.filter(pk=rel.pk).exists()
    )


def batch_door(h: Hiring) -> Door:
    """An update of an application, then a link whose target is a gated person."""

    def prepare() -> dict[str, Any]:
        return ok(
            "prepare_batch_write",
            {
                "actions": [
                    {
                        "operation": "update_record",
                        "arguments": {
                            "record_id": h.kirat_backend.pk,
                            "changes": {"stage": "offer"},
                            "expected_version": 1,
                        },
                        "review_ids": [review(h.kirat_backend)],
                        "decision_reason": "Kirat passed the interview",
                    },
                    {
                        "operation": "link_records",
                        "arguments": {
                            "source_id": h.abhishek_backend.pk,
                            "relationship_type": "referred_by",
                            "target_id": h.kirat.pk,
                        },
                        "review_ids": [review(h.abhishek_backend), review(h.kirat)],
                        "decision_reason": "Kirat referred Abhishek",
                    },
                ]
            },
        )

    def applied() -> bool:
        updated = Record.objects.get(pk=h.kirat_backend.pk).version == 2
        linked = Relationship.objects.filter(
            source=h.abhishek_backend, relationship_type="referred_by", target=h.kirat
        ).exists()
        assert updated == linked, "a batch applies whole or not at all"
        return updated

    return Door(prepare, "commit_batch_write", applied)


def import_door(h: Hiring) -> Door:
    """An import into applications whose one link names an existing, gated person."""

    def prepare() -> dict[str, Any]:
        prepared = ok(
            "prepare_import",
            {
                "collection_id": h.applications.pk,
                "rows": [{"key": "rohan", "title": IMPORTED, "data": {}}],
                "links": [
                    {
                        "source": {"row": "rohan"},
                        "relationship_type": "referred_by",
                        "target": {"record_id": h.kirat.pk},
                    }
                ],
                "review_ids": [review(h.kirat)],
                "decision_reason": "pasted list of referrals",
            },
        )
        assert prepared["needs_decision"] == []
        return prepared

    def applied() -> bool:
        row = Record.objects.filter(collection=h.applications, title=IMPORTED).first()
        if row is None:
            return False
        assert Relationship.objects.filter(source=row, target=h.kirat).exists()
        return True

    return Door(prepare, "commit_import", applied)


DOORS = {
    "link_records": link_door,
    "unlink_records": unlink_door,
    "batch_item": batch_door,
    "import_link": import_door,
}


@pytest.fixture(params=sorted(DOORS))
def door(request, hiring) -> Door:
    return DOORS[request.param](hiring)


def assert_held_then_applied_on_approval(door: Door, action_id: str, gated) -> None:
    before = written()
    waiting = ok(door.commit_tool, {"action_id": action_id})
    assert waiting["status"] == "awaiting_approval", waiting
    assert "tell the user" in waiting["message"] and "next_step" not in waiting, "said once"
    again = ok(door.commit_tool, {"action_id": action_id})
    assert again["status"] == "awaiting_approval"
    assert written() == before, "a held write writes nothing"
    assert not door.applied()
    action = PreparedAction.objects.get(pk=action_id)
    assert action.state == ActionState.AWAITING_APPROVAL
    assert gated.pk in action.collection_ids, "the commit stored what it found touched"

    events_before = AuditEvent.objects.count()
    approved = approve_prepared_action(action_id=action_id, reviewer="user:ana")
    assert approved["status"] == "committed"
    assert door.applied()
    events = list(AuditEvent.objects.filter(action_id=action_id))
    assert events and len(events) == AuditEvent.objects.count() - events_before
    for event in events:
        assert any("approved_by" in e for e in event.review_evidence), event.kind
    replay = ok(door.commit_tool, {"action_id": action_id})
    assert replay["status"] == "committed" and replay["replayed"] is True


def test_a_secondary_path_to_a_gated_collection_holds_the_write(door, hiring, ctx):
    gate(ctx, hiring.people)
    prepared = door.prepare()
    assert prepared["requires_human_approval"] is True
    # Said at prepare, so the agent can tell the user before it commits.
    assert "needs a person's approval" in prepared["next_step"], prepared["next_step"]
    assert_held_then_applied_on_approval(door, prepared["action_id"], hiring.people)


def test_with_nothing_gated_the_same_write_commits_at_once(door):
    prepared = door.prepare()
    assert "requires_human_approval" not in prepared, "said only when a person must approve"
    assert "approval" not in prepared.get("next_step", "")
    committed = ok(door.commit_tool, {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed" and "replayed" not in committed
    assert door.applied()


def test_gating_between_prepare_and_commit_holds_the_commit(door, hiring, ctx):
    prepared = door.prepare()
    assert "requires_human_approval" not in prepared, "said only when a person must approve"
    gate(ctx, hiring.people)
    assert_held_then_applied_on_approval(door, prepared["action_id"], hiring.people)


def test_ungating_between_prepare_and_commit_lets_the_commit_through(door, hiring, ctx):
    gate(ctx, hiring.people)
    prepared = door.prepare()
    assert prepared["requires_human_approval"] is True
    gate(ctx, hiring.people, requires_approval=False)
    committed = ok(door.commit_tool, {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed"
    assert door.applied()


def test_a_gate_elsewhere_in_the_workspace_holds_nothing(door, hiring, ctx):
    gate(ctx, hiring.interviews)
    prepared = door.prepare()
    assert "requires_human_approval" not in prepared, "said only when a person must approve"
    assert ok(door.commit_tool, {"action_id": prepared["action_id"]})["status"] == "committed"


# --- agenda sync: outcomes written to bound records --------------------------------------


def start_bound(records: list[Record]):
    """An agenda bound to these records (one collection), both items completed, closed."""
    d = driver()
    started = d.ok(
        "agenda_start",
        {
            "title": "Hiring follow-ups",
            "record_ids": [r.pk for r in records],
            "source_reference": "search_records on people",
        },
    )
    d.acknowledge(started)
    d.step("complete", "Offer sent.")
    d.step("next")
    d.step("complete", "Reference checked.")
    d.ok("agenda_control", d.mine(action="finish", text="Both done."))
    return d


def test_agenda_sync_holds_outcomes_for_records_gated_after_binding(hiring, ctx):
    d = start_bound([hiring.kirat, hiring.abhishek])
    gate(ctx, hiring.people)
    before = written()
    first = d.ok("agenda_sync_records", d.mine())
    assert first["sync"]["counts"] == {"awaiting_approval": 2}
    assert first["sync_state"] == "pending"
    assert written() == before, "a held outcome writes nothing"

    for report in first["sync"]["results"]:
        approve_prepared_action(action_id=report["action_id"], reviewer="user:ana")
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.version == 2 and kirat.data["agenda_outcome"]["conclusion"] == "Offer sent."
    done = d.ok("agenda_sync_records", d.mine())
    assert done["sync"]["counts"] == {"synced": 2} and done["sync_state"] == "synced"


def test_agenda_sync_with_nothing_gated_writes_every_bound_record(hiring):
    d = start_bound([hiring.kirat, hiring.abhishek])
    synced = d.ok("agenda_sync_records", d.mine())
    assert synced["sync"]["counts"] == {"synced": 2}
    assert Record.objects.get(pk=hiring.abhishek.pk).version == 2


def test_a_held_agenda_outcome_that_went_stale_is_refused_not_the_whole_sync(hiring, ctx):
    gate(ctx, hiring.people)
    d = start_bound([hiring.kirat, hiring.abhishek])
    first = d.ok("agenda_sync_records", d.mine())
    held = {r["record_id"]: r["action_id"] for r in first["sync"]["results"]}
    # A person writes the same field the held outcome writes (an edit of other fields would
    # leave it applicable: tests/workflow/test_pending_field_rule.py).
    services.record_update(
        ctx=ctx,
        record_id=hiring.kirat.pk,
        changes={"agenda_outcome": "written by hand"},
        expected_version=1,
    )
    with pytest.raises(AnchorError) as refused:
        approve_prepared_action(action_id=held[hiring.kirat.pk], reviewer="user:ana")
    assert refused.value.code == "VERSION_CONFLICT"  # the action is marked stale
    approve_prepared_action(action_id=held[hiring.abhishek.pk], reviewer="user:ana")

    again = d.ok("agenda_sync_records", d.mine())
    results = {r["record_id"]: r for r in again["sync"]["results"]}
    assert results[hiring.kirat.pk]["status"] == "refused"
    assert "STALE_REVIEW" in results[hiring.kirat.pk]["message"]
    assert results[hiring.abhishek.pk]["status"] == "synced"
    assert again["sync_state"] == "synced_with_conflicts"
    assert Record.objects.get(pk=hiring.kirat.pk).data["agenda_outcome"] == "written by hand"


# --- the policy itself ----------------------------------------------------------------------


def test_the_policy_holds_an_agent_and_applies_a_person(hiring, ctx):
    gate(ctx, hiring.people)
    touched = approval.collections_touched(
        ctx.workspace_id,
        approval.Touched.of(
            relationships=[
                Relationship.objects.get(source=hiring.kirat_backend, target=hiring.kirat).pk
            ]
        ),
    )
    assert touched == sorted([hiring.applications.pk, hiring.people.pk])
    agent = approval.decide(ctx.workspace_id, touched, actor=approval.AGENT)
    person = approval.decide(ctx.workspace_id, touched, actor=approval.PERSON)
    assert agent.hold and agent.gated == [hiring.people.pk]
    assert not person.hold and person.gated == [hiring.people.pk]
    with pytest.raises(ValueError):
        approval.decide(ctx.workspace_id, touched, actor="robot")


def test_the_policy_reads_only_the_callers_workspace(hiring, ctx, other_ctx):
    from tests.conftest import make_collection

    elsewhere = make_collection(other_ctx, "people")
    gate(other_ctx, elsewhere)
    assert approval.approval_required(ctx.workspace_id, [elsewhere.pk]) == []
    assert approval.collections_touched(
        ctx.workspace_id, approval.Touched.of(records=[hiring.kirat.pk])
    ) == [hiring.people.pk]
    assert (
        approval.collections_touched(
            other_ctx.workspace_id, approval.Touched.of(records=[hiring.kirat.pk])
        )
        == []
    )


def _in_thread(work: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # reported by the test; a thread's exception is lost
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


@pytest.mark.postgres  # SQLite runs one write transaction at a time: nothing to race
@pytest.mark.django_db(transaction=True)
def test_a_gate_cannot_change_under_a_commit_that_has_decided():
    from tests.conftest import make_collection

    services.workspace_ensure("local")
    ctx = services.WriteContext(workspace_id="local", actor_id="local-agent")
    people = make_collection(ctx, "people")
    with transaction.atomic():
        assert not approval.decide("local", [people.pk], actor=approval.AGENT).hold

        def other_commit() -> None:
            with transaction.atomic():
                approval.decide("local", [people.pk], actor=approval.AGENT)

        commit, commit_errors = _in_thread(other_commit)
        wait_until(lambda: not commit.is_alive(), "the other deciding commit to finish")
        assert not commit_errors, "deciding commits do not block"

        person, person_errors = _in_thread(lambda: gate(ctx, people))
        with connection.cursor() as cursor:
            wait_until(lambda: lock_waiters(cursor), "the gate change to wait on a lock")
        assert person.is_alive(), "the gate change waits until the deciding commit ends"
    wait_until(lambda: not person.is_alive(), "the gate change to finish")
    assert not person_errors, person_errors
    people.refresh_from_db()
    assert people.requires_approval
