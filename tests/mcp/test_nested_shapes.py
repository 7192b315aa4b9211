"""Nested arguments are checked by their published shapes: import rows, links and decisions,
batch requests and actions. A malformed item is refused as INVALID_INPUT naming its path, and
nothing is read or written; batch_read items are checked by their own tool's schema.
"""

from __future__ import annotations

import pytest

from tests.workflow.helpers import ok, refused, store_snapshot
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def refused_at(tool: str, arguments: dict, field: str) -> dict:
    before = store_snapshot()
    error = refused(tool, arguments, "INVALID_INPUT")
    assert error["details"]["field"].startswith(field), error
    assert store_snapshot() == before, "a refusal wrote something"
    return error


def test_import_rows_links_and_decisions_have_shapes(hiring):
    people = hiring.people.pk
    base = {"collection_id": people, "decision_reason": "pasted list"}
    refused_at("prepare_import", {**base, "rows": [{"titel": "Rohan"}]}, "rows[0]")
    refused_at(
        "prepare_import", {**base, "rows": [{"title": "Rohan", "data": "x"}]}, "rows[0].data"
    )
    two_ends = {"row": "a", "record_id": hiring.kirat.pk}
    link = {"source": two_ends, "relationship_type": "knows", "target": {"row": "a"}}
    refused_at(
        "prepare_import",
        {**base, "rows": [{"key": "a", "title": "Rohan"}], "links": [link]},
        "links[0].source",
    )
    prepared = ok("prepare_import", {**base, "rows": [{"key": "k", "title": "Kriat"}]})
    assert prepared["needs_decision"] == ["k"]
    refused_at(
        "commit_import",
        {"action_id": prepared["action_id"], "decisions": {"k": {"decision": "maybe"}}},
        "decisions.k",
    )
    refused_at(
        "commit_import",
        {"action_id": prepared["action_id"], "decisions": {"k": {"decision": "use_existing"}}},
        "decisions.k",
    )


def test_batch_items_have_shapes(hiring):
    refused_at(
        "batch_resolve_records",
        {"requests": [{"query": "Kirat", "colection_id": hiring.people.pk}]},
        "requests[0]",
    )
    refused_at("batch_resolve_records", {"requests": [{"collection_id": None}]}, "requests[0]")
    action = {
        "operation": "create_collection",
        "arguments": {},
        "review_ids": ["r"],
        "decision_reason": "x",
    }
    refused_at("prepare_batch_write", {"actions": [action]}, "actions[0].operation")
    refused_at(
        "prepare_batch_write",
        {
            "actions": [
                {
                    **action,
                    "operation": "archive_record",
                    "arguments": {"record_id": hiring.kirat.pk, "expected_version": 1},
                    "review_ids": [],
                }
            ]
        },
        "actions[0].review_ids",
    )


def test_a_batch_read_item_is_checked_by_its_own_tools_schema(hiring):
    bad_op = {"operation": "search_records", "where": [{"field": ["stage"], "op": "like"}]}
    error = refused_at("batch_read", {"requests": [bad_op]}, "requests[0].where[0].op")
    assert "search_records" in error["message"]
    dotted = {"operation": "search_records", "where": [{"field": "offer.ctc", "op": "exists"}]}
    error = refused_at(
        "batch_read",
        {"requests": [{"operation": "list_collections"}, dotted]},
        "requests[1].where[0].field",
    )
    assert '["offer", "ctc"]' in error["message"]
    refused_at(
        "batch_read",
        {
            "requests": [
                {"operation": "traverse", "start_record_id": hiring.kirat.pk, "max_depth": "2"}
            ]
        },
        "requests[0].max_depth",
    )


def test_a_batch_read_string_stays_a_string(hiring):
    result = ok(
        "batch_read",
        {
            "requests": [
                {"operation": "search_records", "query": "null", "collection_id": hiring.people.pk}
            ]
        },
    )
    item = result["items"][0]
    assert "error" not in item, item
    assert item["result"]["records"] == [], "'null' was read as no query and widened the search"
