"""Search by meaning through the MCP tools: search_records, batch_read, and resolve_record's
refusal to use it."""

from __future__ import annotations

import pytest

from tests.conftest import OTHER_WORKSPACE, make_collection, make_record
from tests.workflow.helpers import ok, refused


@pytest.fixture
def expenses(ctx):
    claims = make_collection(ctx, "expenses", "Money spent on the team's behalf")
    make_record(ctx, claims, "Expense: MacBook for Priya", amount=2400, status="approved")
    make_record(ctx, claims, "Team lunch at the offsite", amount=180)
    make_record(ctx, claims, "Conference ticket for Sam", amount=650)
    return claims


def titles(result) -> list[str]:
    return [item["title"] for item in result["records"]]


def test_meaning_finds_on_the_first_page_what_words_miss(expenses):
    words = ok("search_records", {"text": "laptop reimbursement"})
    assert words["records"] == []
    meaning = ok("search_records", {"text": "laptop reimbursement", "mode": "meaning"})
    first = meaning["records"][0]
    assert first["title"] == "Expense: MacBook for Priya"
    assert (first["matched"], first["evidence"]) == ("meaning", "related, not identity evidence")
    assert meaning["mode"] == "meaning"


def test_a_bad_mode_is_a_structured_error_naming_the_field(expenses):
    error = refused("search_records", {"text": "laptop", "mode": "semantic"}, "INVALID_INPUT")
    assert "mode" in error["message"]
    missing_text = refused("search_records", {"mode": "meaning"}, "INVALID_INPUT")
    assert "text" in missing_text["message"]


def test_meaning_off_is_refused_by_name(expenses, settings):
    settings.ANCHOR_MEANING = False
    error = refused("search_records", {"text": "laptop", "mode": "meaning"}, "UNSUPPORTED")
    assert "ANCHOR_MEANING" in error["message"]
    assert ok("search_records", {"text": "macbook"})["count"] == 1  # words still answer


def test_each_workspace_finds_only_its_own_records(expenses, other_ctx, settings):
    theirs = make_collection(other_ctx, "expenses")
    make_record(other_ctx, theirs, "Laptop reimbursement for Dana", amount=1900)
    mine = ok("search_records", {"text": "laptop reimbursement", "mode": "meaning"})
    assert "Laptop reimbursement for Dana" not in titles(mine)
    settings.ANCHOR_WORKSPACE_ID = OTHER_WORKSPACE
    other = ok("search_records", {"text": "laptop reimbursement", "mode": "meaning"})
    assert titles(other) == ["Laptop reimbursement for Dana"]


def test_batch_read_search_items_take_the_mode(expenses):
    result = ok(
        "batch_read",
        {
            "requests": [
                {"operation": "search_records", "text": "laptop reimbursement"},
                {
                    "operation": "search_records",
                    "text": "laptop reimbursement",
                    "mode": "meaning",
                    "limit": 5,
                    "include_context": True,
                },
            ]
        },
    )
    words, meaning = (item["result"] for item in result["items"])
    assert words["records"] == []
    assert meaning["records"][0]["title"] == "Expense: MacBook for Priya"
    assert meaning["records"][0]["matched"] == "meaning"
    assert set(meaning["contexts"]) == {r["record_id"] for r in meaning["records"]}
    bad = refused(
        "batch_read",
        {"requests": [{"operation": "search_records", "text": "x", "mode": "fuzzy"}]},
        "INVALID_INPUT",
    )
    assert bad["details"]["field"] == "requests[0].mode"


def test_resolve_record_never_matches_by_meaning(expenses):
    # Search by meaning relates the question to the record; identity is never inferred from it.
    found = ok("search_records", {"text": "laptop reimbursement", "mode": "meaning"})
    assert found["records"][0]["title"] == "Expense: MacBook for Priya"
    resolved = ok("resolve_record", {"query": "laptop reimbursement", "collection_id": expenses.pk})
    assert resolved["status"] == "no_match"
    named = str(resolved)
    assert "MacBook" not in named and "similarity" not in named
    refused("resolve_record", {"query": "laptop", "mode": "meaning"}, "INVALID_INPUT")
