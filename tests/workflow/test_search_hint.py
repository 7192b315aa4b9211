"""An empty search caused by a value of the wrong JSON type says so, and what to send instead."""

from __future__ import annotations

from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok


def search(collection, where):
    return ok("search_records", {"collection_id": collection.pk, "where": where})


def test_a_string_compared_with_stored_numbers_gets_a_hint(ctx):
    offers = make_collection(ctx, "offers", "Offers made to candidates")
    make_record(ctx, offers, "Kirat offer", offer={"ctc": 100000}, stage="sent")
    page = search(offers, [{"field": ["offer", "ctc"], "op": "gt", "value": "90000"}])
    assert page["records"] == []
    assert '["offer", "ctc"]' in page["hint"] and "as a number" in page["hint"]
    assert 'Send 90000 instead of "90000"' in page["hint"]
    fixed = search(offers, [{"field": ["offer", "ctc"], "op": "gt", "value": 90000}])
    assert [r["title"] for r in fixed["records"]] == ["Kirat offer"] and "hint" not in fixed


def test_a_number_compared_with_stored_strings_gets_a_hint(ctx):
    people = make_collection(ctx, "people", "People")
    make_record(ctx, people, "Kirat", employee_number="1042")
    page = search(people, [{"field": ["employee_number"], "op": "in", "value": [1042, 1043]}])
    assert page["records"] == [] and "as a string" in page["hint"]


def test_no_hint_when_nothing_of_another_type_is_stored(ctx):
    offers = make_collection(ctx, "offers", "Offers made to candidates")
    make_record(ctx, offers, "Kirat offer", offer={"ctc": 100000})
    other = make_collection(ctx, "other", "Elsewhere")
    make_record(ctx, other, "Stringly", offer={"ctc": "lots"})
    page = search(offers, [{"field": ["offer", "ctc"], "op": "gt", "value": 200000}])
    assert page["records"] == [] and "hint" not in page
    # The other collection's strings are out of scope for a search of this one.
    page = search(offers, [{"field": ["offer", "ctc"], "op": "eq", "value": "lots"}])
    assert "as a number" in page["hint"]
    everywhere = [{"field": ["offer", "ctc"], "op": "eq", "value": "lots"}]
    assert ok("search_records", {"where": everywhere})["records"]
