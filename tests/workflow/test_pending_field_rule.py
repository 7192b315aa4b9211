"""A person's edit and an agent's write awaiting approval: disjoint fields apply, overlapping
fields go stale with the fields named.

The agent's update replaces only its own top-level keys, so an edit of other keys cannot be
overwritten by it. Approval therefore re-checks the keys the update writes (which are the keys
its preview showed the person), not the whole version. An agent's own commit keeps the exact
`expected_version` check of the contract.
"""

from __future__ import annotations

from typing import Any

import pytest

from records import services
from records.errors import AnchorError
from records.models import AuditEvent, Record
from records.services import WriteContext
from tests.workflow.helpers import ok, refused
from workflow.actions import approve_prepared_action, mark_stale_pending
from workflow.models import ActionState, PreparedAction
from workflow.names import cache as names_cache

PERSON = "user:maya"


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def _person(ctx: WriteContext) -> WriteContext:
    return WriteContext(workspace_id=ctx.workspace_id, actor_id=PERSON, decision_reason="edit")


def _held_update(record: Record, changes: dict[str, Any]) -> str:
    """The agent prepares and commits an update of a gated record; it waits for a person."""
    review = ok("resolve_record", {"query": record.pk})["resolution_id"]
    prepared = ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": record.pk,
                "changes": changes,
                "expected_version": record.version,
            },
            "review_ids": [review],
            "decision_reason": "Kirat sent a new address and phone",
        },
    )
    held = ok("commit_write", {"action_id": prepared["action_id"]})
    assert held["status"] == "awaiting_approval", held
    return prepared["action_id"]


def _gate_people(ctx, hiring) -> None:
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )


def test_an_edit_of_other_fields_leaves_the_pending_update_applicable(hiring, ctx):
    _gate_people(ctx, hiring)
    action_id = _held_update(hiring.kirat, {"address": "14 Residency Rd", "phone": "98450"})
    services.record_update(
        ctx=_person(ctx),
        record_id=hiring.kirat.pk,
        changes={"email": "kirat.s@example.com"},
        expected_version=1,
    )

    assert mark_stale_pending(ctx.workspace_id) == [], "the sweep does not call it stale"
    approve_prepared_action(action_id=action_id, reviewer=PERSON)

    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.version == 3
    assert kirat.data["email"] == "kirat.s@example.com", "the person's edit is kept"
    assert (kirat.data["address"], kirat.data["phone"]) == ("14 Residency Rd", "98450")
    event = AuditEvent.objects.filter(record_id=kirat.pk, kind="record.updated").latest("id")
    assert event.before is not None and event.before["version"] == 2
    assert event.actor_id == "local-agent"
    assert any(e.get("approved_by") == PERSON for e in event.review_evidence)


def test_an_edit_of_a_field_the_update_writes_makes_it_stale_and_says_which(hiring, ctx):
    _gate_people(ctx, hiring)
    action_id = _held_update(hiring.kirat, {"address": "14 Residency Rd", "phone": "98450"})
    services.record_update(
        ctx=_person(ctx), record_id=hiring.kirat.pk, changes={"phone": "99000"}, expected_version=1
    )

    assert mark_stale_pending(ctx.workspace_id) == [action_id]
    action = PreparedAction.objects.get(pk=action_id)
    assert action.state == ActionState.STALE
    assert "also set phone" in action.stale_reason and "Kirat" in action.stale_reason
    with pytest.raises(AnchorError) as refusal:
        approve_prepared_action(action_id=action_id, reviewer=PERSON)
    assert refusal.value.code == "STALE_REVIEW"
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.data["phone"] == "99000" and "address" not in kirat.data, "nothing applied"


def test_a_value_set_back_to_what_the_agent_saw_does_not_conflict(hiring, ctx):
    _gate_people(ctx, hiring)
    action_id = _held_update(hiring.kirat, {"email": "kirat@new.example.com"})
    person = _person(ctx)
    services.record_update(
        ctx=person, record_id=hiring.kirat.pk, changes={"email": "typo@"}, expected_version=1
    )
    services.record_update(
        ctx=person,
        record_id=hiring.kirat.pk,
        changes={"email": "kirat@example.com"},
        expected_version=2,
    )

    approve_prepared_action(action_id=action_id, reviewer=PERSON)

    assert Record.objects.get(pk=hiring.kirat.pk).data["email"] == "kirat@new.example.com"


def test_archiving_in_between_is_never_rebased_over(hiring, ctx):
    _gate_people(ctx, hiring)
    action_id = _held_update(hiring.kirat, {"phone": "98450"})
    services.record_archive(ctx=_person(ctx), record_id=hiring.kirat.pk, expected_version=1)

    with pytest.raises(AnchorError):
        approve_prepared_action(action_id=action_id, reviewer=PERSON)
    assert "phone" not in Record.objects.get(pk=hiring.kirat.pk).data


def test_an_agents_own_commit_keeps_the_exact_version_check(hiring, ctx):
    review = ok("resolve_record", {"query": hiring.kirat.pk})["resolution_id"]
    prepared = ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.kirat.pk,
                "changes": {"phone": "98450"},
                "expected_version": 1,
            },
            "review_ids": [review],
            "decision_reason": "Kirat sent a new phone",
        },
    )
    services.record_update(
        ctx=_person(ctx), record_id=hiring.kirat.pk, changes={"email": "k@x.io"}, expected_version=1
    )

    refused("commit_write", {"action_id": prepared["action_id"]}, "VERSION_CONFLICT")
    assert "phone" not in Record.objects.get(pk=hiring.kirat.pk).data
