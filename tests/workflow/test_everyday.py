"""The seed's everyday interactions, as an agent following the tool descriptions would run them."""

from __future__ import annotations

import pytest

from records.models import Record, Relationship
from tests.conftest import make_collection
from tests.workflow.helpers import ok, refused, store_snapshot, write
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def test_feedback_for_kriats_backend_coding_interview(hiring):
    # "Kriat" is a typo: the server suggests Kirat and asks; it does not pick.
    person = ok("resolve_record", {"query": "Kriat", "collection_id": hiring.people.pk})
    assert person["status"] == "needs_clarification"
    assert person["candidates"][0]["title"] == "Kirat"
    # The user confirms Kirat; the agent follows links, not the name, to the interview.
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    application = ok(
        "resolve_record",
        {
            "query": "Kirat - Junior Backend",
            "context_record_ids": [kirat["selected_record_id"], hiring.backend.pk],
        },
    )
    assert application["selected_record_id"] == hiring.kirat_backend.pk
    interview = ok(
        "resolve_record",
        {
            "query": "Kirat backend coding interview",
            "collection_id": hiring.interviews.pk,
            "context_record_ids": [application["selected_record_id"]],
        },
    )
    assert interview["selected_record_id"] == hiring.coding_interview.pk


def test_update_rahul_with_two_rahuls_asks_which(hiring):
    before = store_snapshot()
    result = ok("resolve_record", {"query": "Rahul"})
    assert result["status"] == "needs_clarification"
    previews = [c["data_preview"] for c in result["candidates"] if c["title"] == "Rahul"]
    assert len(previews) == 2
    assert any("backend" in p for p in previews) and any("frontend" in p for p in previews)
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.rahul_backend.pk,
                "changes": {"x": 1},
                "expected_version": 1,
            },
            "review_ids": [result["resolution_id"]],
            "decision_reason": "update Rahul",
        },
        "NEEDS_CLARIFICATION",
    )
    assert store_snapshot() == before


def test_track_travel_expenses_reuses_expenses(ctx):
    make_collection(ctx, "Expenses", "Track money spent, one expense per record")
    discovery = ok(
        "discover_collections",
        {"name": "travel expenses", "purpose": "Track money spent on travel"},
    )
    assert discovery["suggestions"][0]["name"] == "Expenses"
    assert discovery["catalog"][0]["purpose"].startswith("Track money spent")


def test_add_him_to_that_opening_without_context_invents_no_link(hiring):
    before = store_snapshot()
    him = ok("resolve_record", {"query": "him"})
    assert him["status"] in {"no_match", "needs_clarification"}
    assert "selected_record_id" not in him
    opening = ok("resolve_record", {"query": "that opening"})
    assert "selected_record_id" not in opening
    # Without resolved endpoints there is nothing to cite, so no link can be prepared.
    refused(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": hiring.kirat.pk,
                "relationship_type": "applied_to",
                "target_id": hiring.backend.pk,
            },
            "review_ids": [him["resolution_id"], opening["resolution_id"]],
            "decision_reason": "most recent person and opening",
        },
        "REVIEW_REQUIRED",
    )
    assert Relationship.objects.count() == before["Relationship"]


def test_another_kirat_is_created_only_with_the_users_distinction(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    arguments = {"collection_id": hiring.people.pk, "title": "Kirat", "data": {}}
    refused(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": arguments,
            "review_ids": [review["resolution_id"]],
            "decision_reason": "add Kirat",
        },
        "NEEDS_CLARIFICATION",
    )
    write(
        "create_record",
        arguments,
        [review["resolution_id"]],
        clarification="User: another Kirat, a different person (joins in March)",
    )
    assert Record.objects.filter(title="Kirat").count() == 2


def test_change_my_details_needs_an_established_self_mapping(hiring):
    me = ok("resolve_record", {"query": "me"})
    assert me["status"] == "needs_clarification"
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    write(
        "set_self",
        {"record_id": hiring.kirat.pk, "expected_version": 1},
        [kirat["resolution_id"]],
        clarification="User: I am Kirat",
    )
    me = ok("resolve_record", {"query": "I"})
    assert me["selected_record_id"] == hiring.kirat.pk
    write(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"phone": "123"}, "expected_version": 1},
        [me["resolution_id"]],
    )
    assert Record.objects.get(pk=hiring.kirat.pk).data["phone"] == "123"
