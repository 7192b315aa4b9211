"""The first calls an agent gets wrong get a refusal naming the field and the fix.

A made-up ID names the argument and the kind expected; an Anchor ID of another kind says which
kind it is and what it is for (never for another workspace's IDs); a dotted data path is
answered with the path that matches.
"""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok, refused
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def test_a_made_up_id_names_the_field_and_the_kind_expected(hiring):
    made_up = str(uuid.uuid4())
    error = refused("get_record_context", {"record_id": made_up}, "NOT_FOUND")
    assert error["details"]["field"] == "record_id"
    assert error["details"]["expected"] == "record"
    assert error["message"].startswith("record_id: no record with ID")
    assert "resolve_record" in error["message"], error
    assert "got" not in error["details"]

    error = refused("commit_write", {"action_id": made_up}, "NOT_FOUND")
    assert error["details"]["field"] == "action_id"
    assert "prepare tool" in error["message"]


def test_a_resolution_id_sent_as_an_action_id_says_what_it_is(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    error = refused("commit_write", {"action_id": review["resolution_id"]}, "NOT_FOUND")
    assert error["details"]["got"] == "resolution"
    assert error["details"]["field"] == "action_id"
    assert "resolution_id from resolve_record" in error["message"]
    assert "review_ids" in error["message"], error


def test_a_record_id_sent_as_a_collection_id_says_what_it_is(hiring):
    error = refused("search_records", {"collection_id": hiring.kirat.pk}, "NOT_FOUND")
    assert error["details"]["got"] == "record"
    assert error["details"]["field"] == "collection_id"
    assert "is not a collection ID; it is a record ID" in error["message"], error


def test_link_ends_name_their_own_field(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    error = refused(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": hiring.kirat.pk,
                "relationship_type": "knows",
                "target_id": hiring.people.pk,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user said so",
        },
        "NOT_FOUND",
    )
    assert error["details"]["field"] == "target_id"
    assert error["details"]["got"] == "collection"


def test_a_record_id_sent_as_a_relationship_id_says_what_it_is(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    error = refused(
        "prepare_write",
        {
            "operation": "unlink_records",
            "arguments": {"relationship_id": hiring.kirat.pk},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user said so",
        },
        "NOT_FOUND",
    )
    assert error["details"]["got"] == "record"
    assert "get_record_context" in error["message"], error


def test_a_review_id_that_is_a_record_id(hiring):
    error = refused(
        "prepare_write",
        {
            "operation": "archive_record",
            "arguments": {"record_id": hiring.kirat.pk, "expected_version": 1},
            "review_ids": [hiring.kirat.pk],
            "decision_reason": "the user said so",
        },
        "NOT_FOUND",
    )
    assert error["details"]["field"] == "review_ids[0]"
    assert error["details"]["got"] == "record"
    assert "resolve_record" in error["message"]


def test_another_workspaces_id_is_only_not_found(hiring, other_ctx):
    theirs = make_collection(other_ctx, "people", "Their people")
    their_record = make_record(other_ctx, theirs, "Kirat")
    error = refused("search_records", {"collection_id": their_record.pk}, "NOT_FOUND")
    assert "got" not in error["details"], "another workspace's record must stay unknown"
    assert "record ID" not in error["message"].split(";")[0]
    error = refused("get_record_context", {"record_id": theirs.pk}, "NOT_FOUND")
    assert "got" not in error["details"]


def test_a_dotted_path_gets_the_path_inside_data(hiring):
    error = refused(
        "search_records",
        {"where": [{"field": "data.amount", "op": "gt", "value": 1}]},
        "INVALID_INPUT",
    )
    assert '["amount"]' in error["message"], error
    assert '["data", "amount"]' not in error["message"]
    error = refused(
        "search_records",
        {"where": [{"field": "offer.ctc", "op": "gt", "value": 1}]},
        "INVALID_INPUT",
    )
    assert '["offer", "ctc"]' in error["message"], error


def test_a_path_through_data_that_matches_nothing_says_why(hiring):
    page = ok(
        "search_records",
        {
            "collection_id": hiring.people.pk,
            "where": [{"field": ["data", "team"], "op": "eq", "value": "backend"}],
        },
    )
    assert page["records"] == []
    assert '["team"]' in page["hint"], page
    found = ok(
        "search_records",
        {
            "collection_id": hiring.people.pk,
            "where": [{"field": ["team"], "op": "eq", "value": "backend"}],
        },
    )
    assert [r["title"] for r in found["records"]] == ["Rahul"]
    assert "hint" not in found
