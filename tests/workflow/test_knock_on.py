"""An approval checks only the waiting writes it may have made stale, and staleness stays exact:
a change that alters a waiting write's answer marks it stale, naming the approval that did it;
one that does not leaves it waiting; writes in other collections are not even tried."""

from __future__ import annotations

from typing import Any

import pytest

from records.models import Record
from tests.admin.review_helpers import AGENT, gate, held_update
from workflow import actions
from workflow.actions import approve_prepared_action, commit_write, prepare_write
from workflow.models import ActionState, PreparedAction
from workflow.resolution import resolve_record

PERSON = "user:maya"
CHOSEN = "The user picked the backend Rahul in the client."


def held(
    operation: str, arguments: dict[str, Any], query: str, collection_id: str, said: str = ""
) -> str:
    review = resolve_record(AGENT, query=query, collection_id=collection_id)
    prepared = prepare_write(
        AGENT,
        operation=operation,
        arguments=arguments,
        review_ids=[review["resolution_id"]],
        decision_reason="The user asked for it.",
        clarification=said,
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    return prepared["action_id"]


def archive(record: Record) -> str:
    record = Record.objects.get(pk=record.pk)
    arguments = {"record_id": record.pk, "expected_version": record.version}
    return held("archive_record", arguments, record.pk, record.collection_id)


def create(collection_id: str, title: str) -> str:
    arguments = {"collection_id": collection_id, "title": title, "data": {}}
    return held("create_record", arguments, title, collection_id, "A different person.")


@pytest.fixture
def tried(monkeypatch) -> list[str]:
    """The waiting writes tried in full after a write."""
    seen: list[str] = []
    real = actions._still_applies

    def spy(action: PreparedAction) -> Any:
        seen.append(action.pk)
        return real(action)

    monkeypatch.setattr(actions, "_still_applies", spy)
    return seen


def state(action_id: str) -> PreparedAction:
    return PreparedAction.objects.get(pk=action_id)


def test_archiving_the_other_candidate_makes_the_choice_stale_and_names_the_approval(hiring, ctx):
    gate(ctx, hiring.people)
    choice = held_update(hiring.rahul_backend, {"team": "platform"}, clarification=CHOSEN).pk
    other = archive(hiring.rahul_frontend)

    approve_prepared_action(action_id=other, reviewer=PERSON, described="archive Rahul")

    stale = state(choice)
    assert stale.state == ActionState.STALE
    assert stale.stale_reason.startswith("Approving “archive Rahul” made this write stale.")
    assert "archived" in stale.stale_reason


def test_a_change_that_leaves_the_answer_alone_leaves_the_write_waiting(hiring, ctx, tried):
    gate(ctx, hiring.people)
    kirat = held_update(hiring.kirat, {"stage": "offer"}).pk
    abhishek = held_update(hiring.abhishek, {"stage": "offer"}).pk

    approve_prepared_action(action_id=abhishek, reviewer=PERSON)

    assert state(kirat).state == ActionState.AWAITING_APPROVAL
    assert tried == [], "a data edit of another record moves nothing the update depends on"


def test_a_new_name_is_matched_against_each_waiting_review(hiring, ctx, tried):
    gate(ctx, hiring.people)
    choice = held_update(hiring.rahul_backend, {"team": "platform"}, clarification=CHOSEN).pk
    unrelated = create(hiring.people.pk, "Zeynep Arslan")
    another_rahul = create(hiring.people.pk, "Rahul")

    approve_prepared_action(action_id=unrelated, reviewer=PERSON)
    assert state(choice).state == ActionState.AWAITING_APPROVAL
    assert choice not in tried, "a name that cannot match 'Rahul' is ruled out without a dry run"

    approve_prepared_action(action_id=another_rahul, reviewer=PERSON)
    assert state(choice).state == ActionState.STALE
    assert "new exact candidate 'Rahul'" in state(choice).stale_reason


def test_waiting_writes_in_other_collections_are_not_tried(hiring, ctx, tried):
    gate(ctx, hiring.people)
    gate(ctx, hiring.openings)
    opening = held_update(hiring.backend, {"level": "mid"}).pk
    rahul = archive(hiring.rahul_frontend)

    approve_prepared_action(action_id=rahul, reviewer=PERSON)

    assert opening not in tried
    assert state(opening).state == ActionState.AWAITING_APPROVAL


def test_the_warning_before_approving_lists_what_would_go_stale_and_writes_nothing(hiring, ctx):
    gate(ctx, hiring.people)
    choice = held_update(hiring.rahul_backend, {"team": "platform"}, clarification=CHOSEN).pk
    other = archive(hiring.rahul_frontend)
    unrelated = held_update(hiring.kirat, {"stage": "offer"}).pk

    undone = actions.stale_if_approved(other, described="archive Rahul")

    assert [pk for pk, _ in undone] == [choice]
    assert undone[0][1].startswith("Approving “archive Rahul” made this write stale.")
    assert "the user confirmed" not in undone[0][1], "an agent-reported clarification"
    assert state(other).state == ActionState.AWAITING_APPROVAL, "a dry run"
    assert state(choice).state == state(unrelated).state == ActionState.AWAITING_APPROVAL
    assert Record.objects.get(pk=hiring.rahul_frontend.pk).archived_at is None
