"""Answers given in the client's dialog: the question a review leaves, and how its answer is kept.

The MCP side (the dialog itself) is tested through the official client in
tests/e2e/test_client_elicitation.py; here are the rules the store keeps: only the review's own
actor in its own workspace can confirm it, only once, only with one of the question's choices,
and a cancelled question stores nothing.
"""

from __future__ import annotations

import pytest

from records.errors import AnchorError
from tests.conftest import ACTOR, WORKSPACE
from tests.workflow.helpers import ok
from workflow.client_confirmation import (
    CANCEL,
    DIFFERENT,
    confirm_resolution,
    resolution_question,
)
from workflow.models import ReviewTicket
from workflow.names import cache as names_cache
from workflow.scope import Scope
from workflow.tickets import ticket_evidence

MINE = Scope(workspace_id=WORKSPACE, actor_id=ACTOR)
CLIENT = {"name": "dialog-client", "version": "7.1"}


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def test_the_question_offers_the_candidates_a_different_one_and_cancel(hiring):
    result = ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    question = resolution_question(MINE, result["resolution_id"])
    assert question is not None
    values = [value for value, _ in question.choices]
    assert set(values[:-2]) == {hiring.rahul_backend.pk, hiring.rahul_frontend.pk}
    assert values[-2:] == [DIFFERENT, CANCEL]
    assert all(title.startswith("Rahul (people") for _, title in question.choices[:-2])
    titles = [title for _, title in question.choices[:-2]]
    assert len(set(titles)) == 2 and all(": " in title for title in titles), titles
    resolved = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    assert resolution_question(MINE, resolved["resolution_id"]) is None


def test_an_answer_is_stored_once_and_travels_in_the_evidence(hiring):
    result = ok("resolve_record", {"query": "Kriat", "collection_id": hiring.people.pk})
    question = resolution_question(MINE, result["resolution_id"])
    assert question is not None
    with pytest.raises(AnchorError):
        confirm_resolution(MINE, question, choice=CANCEL, client=CLIENT)
    with pytest.raises(AnchorError):
        confirm_resolution(MINE, question, choice=hiring.abhishek.pk, client=CLIENT)
    ticket = ReviewTicket.objects.get(pk=result["resolution_id"])
    assert ticket.client_confirmation is None  # nothing stored by a refusal

    stored = confirm_resolution(MINE, question, choice=hiring.kirat.pk, client=CLIENT)
    assert stored["record_id"] == hiring.kirat.pk and stored["client"] == CLIENT
    with pytest.raises(AnchorError, match="already has the user's answer"):
        confirm_resolution(MINE, question, choice=DIFFERENT, client=CLIENT)
    ticket.refresh_from_db()
    assert ticket.client_confirmation == stored
    assert ticket_evidence(ticket)["user_confirmed_in_client"] == stored


def test_another_actor_or_workspace_cannot_ask_or_answer(hiring):
    result = ok("resolve_record", {"query": "Kriat", "collection_id": hiring.people.pk})
    question = resolution_question(MINE, result["resolution_id"])
    assert question is not None
    for stranger in (
        Scope(workspace_id=WORKSPACE, actor_id="another-agent"),
        Scope(workspace_id="elsewhere", actor_id=ACTOR),
    ):
        with pytest.raises(AnchorError) as refused:
            resolution_question(stranger, result["resolution_id"])
        assert refused.value.code == "NOT_FOUND"
        with pytest.raises(AnchorError):
            confirm_resolution(stranger, question, choice=hiring.kirat.pk, client=CLIENT)
    assert ReviewTicket.objects.get(pk=result["resolution_id"]).client_confirmation is None


def test_an_import_question_covers_every_undecided_flagged_row(hiring):
    from workflow.import_confirmation import SAME, import_decisions, import_question

    prepared = ok(
        "prepare_import",
        {
            "collection_id": hiring.people.pk,
            "rows": [
                {"key": "a", "title": "Kriat", "data": {}},
                {"key": "b", "title": "Neha Sharma", "data": {}},
                {"key": "c", "title": "Neha Sharmaa", "data": {}},
                {"key": "d", "title": "Abhishek", "data": {}},
            ],
            "decision_reason": "New hires",
        },
    )
    assert sorted(prepared["needs_decision"]) == ["a", "c", "d"]
    question, _ = import_question(MINE, prepared["action_id"], decided={"d"})
    assert question is not None
    rows = {row.key: row for row in question.rows}
    assert set(rows) == {"a", "c"}  # d was decided by the agent, b is clean
    assert [v for v, _ in rows["a"].choices] == [hiring.kirat.pk, DIFFERENT]
    assert [v for v, _ in rows["c"].choices] == [SAME, DIFFERENT]
    content = {rows["a"].field: DIFFERENT, rows["c"].field: SAME}
    decisions = import_decisions(question, content, CLIENT)
    assert decisions is not None
    assert decisions["a"]["decision"] == "create_anyway"
    assert decisions["c"]["decision"] == "skip"
    assert decisions["a"]["user_confirmed_in_client"]["client"] == CLIENT
    assert import_decisions(question, {rows["a"].field: "nonsense"}, CLIENT) is None
    other = Scope(workspace_id=WORKSPACE, actor_id="another-agent")
    assert import_question(other, prepared["action_id"], decided=set())[0] is None


def test_batch_items_that_ask_say_why_the_client_was_not_asked_and_others_say_nothing(hiring):
    from workflow.mcp.elicitation import NO_CAPABILITY

    batch = ok(
        "batch_resolve_records",
        {"requests": [{"query": "Kriat", "ask_user": True}, {"query": "Kriat"}]},
    )
    asking, plain = (item["result"] for item in batch["items"])
    assert asking["status"] == plain["status"] == "needs_clarification"
    assert asking["client_question"] == {"asked": False, "reason": NO_CAPABILITY}
    assert "client_question" not in plain
