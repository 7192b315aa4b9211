"""Every review, prepare and commit reply names the next step, with the exact ID to cite."""

from __future__ import annotations

from tests.workflow.helpers import ok


def test_a_create_then_link_walks_on_next_step_alone(hiring):
    review = ok("resolve_record", {"query": "Zoya", "collection_id": hiring.people.pk})
    assert review["status"] == "no_match"
    assert "expected answer before a create" in review["next_step"]
    assert review["resolution_id"] in review["next_step"]

    prepared = ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Zoya", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user introduced Zoya",
        },
    )
    assert f"commit_write with action_id {prepared['action_id']}" in prepared["next_step"]
    committed = ok("commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed" and committed["next_step"].startswith("Done")
    assert committed["review"]["resolution_id"] in committed["next_step"]


def test_resolved_warns_about_proposing_the_same_title_again(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    assert review["status"] == "resolved"
    assert hiring.kirat.pk in review["next_step"] and "NEW title" in review["next_step"]


def test_needs_clarification_says_to_ask(hiring):
    review = ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    assert review["status"] == "needs_clarification"
    assert review["next_step"].startswith("Ask the user")


def test_discovery_and_batches_carry_next_steps(hiring):
    discovery = ok("discover_collections", {"name": "expenses", "purpose": "Money we spent"})
    assert discovery["discovery_id"] in discovery["next_step"]
    batch = ok(
        "batch_resolve_records",
        {"requests": [{"query": "Kirat", "collection_id": hiring.people.pk}]},
    )
    assert batch["items"][0]["result"]["next_step"]
