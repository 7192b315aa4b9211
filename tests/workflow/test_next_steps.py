"""A review, prepare or commit reply names the next step, and which of its IDs to cite, when that
changes what the agent does: not after a plain resolved answer or prepare, whose tools say it."""

from __future__ import annotations

import pytest

from tests.mcp_client import call_tool
from tests.workflow.helpers import ok


def test_a_create_then_link_walks_on_next_step_alone(hiring):
    review = ok("resolve_record", {"query": "Zoya", "collection_id": hiring.people.pk})
    assert review["status"] == "no_match"
    assert "expected answer before a create" in review["next_step"]
    assert "cite this resolution_id" in review["next_step"], "by key: the value is beside it"

    prepared = ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Zoya", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user introduced Zoya",
        },
    )
    assert "next_step" not in prepared, "prepare_write says commit_write comes next"
    committed = ok("commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed" and committed["review"]["resolution_id"]
    assert "cite review.resolution_id" in committed["next_step"]


def test_resolved_says_only_what_to_cite_and_a_create_of_that_title_is_still_stopped(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    assert review["status"] == "resolved"
    assert "next_step" not in review, "resolve_record says to cite its resolution_id"
    assert review["selected_record_id"] == hiring.kirat.pk
    # The warning it no longer repeats is the server's to give, when it is relevant.
    again = call_tool(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Kirat", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user mentioned Kirat",
        },
    )
    assert not again["ok"]


@pytest.mark.parametrize("words", ["him", "Her.", "that opening", "those candidates", "it"])
def test_a_word_referring_back_is_never_offered_as_a_new_title(hiring, words):
    review = ok("resolve_record", {"query": words})
    assert review["status"] == "no_match"
    assert "create_record" not in review["next_step"]
    assert "Never create a record with this title" in review["next_step"]


def test_a_new_name_is_still_offered_for_creation(hiring):
    review = ok(
        "resolve_record", {"query": "That Cafe Downtown Project", "collection_id": hiring.people.pk}
    )
    assert "create_record" in review["next_step"]


def test_needs_clarification_says_to_ask(hiring):
    review = ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    assert review["status"] == "needs_clarification"
    assert review["next_step"].startswith("Ask the user")


def test_discovery_and_batches_carry_next_steps(hiring):
    discovery = ok("discover_collections", {"name": "expenses", "purpose": "Money we spent"})
    assert discovery["discovery_id"] in discovery["next_step"]
    names = [{"query": name, "collection_id": hiring.people.pk} for name in ("Zoya", "Zeno")]
    first, second = ok("batch_resolve_records", {"requests": names})["items"]
    assert "expected answer before a create" in first["result"]["next_step"]
    assert "next_step" not in second["result"], "a batch gives each next step once"
