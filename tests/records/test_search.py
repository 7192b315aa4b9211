"""search_records beyond titles: full text, typed where conditions, linked_to and order_by."""

from __future__ import annotations

import pytest
from django.db import connection

from records import selectors, services
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.records.helpers import refused


def search(**kwargs):
    return selectors.search_records(workspace_id=WORKSPACE, **kwargs)


def titles(result) -> list[str]:
    return [item["title"] for item in result["records"]]


def all_pages(**kwargs) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = search(cursor=cursor, **kwargs)
        seen += [item["record_id"] for item in page["records"]]
        if not page["has_more"]:
            return seen
        cursor = page["next_cursor"]


# --- text ------------------------------------------------------------------------------------


@pytest.fixture
def notes(ctx):
    people = make_collection(ctx, "people")
    return {
        "zoe": make_record(ctx, people, "Zoë Müller", role="Engineer", notes="Strong interview"),
        "bob": make_record(ctx, people, "Bob", notes="Met Zoe Muller at the interview", year=2024),
        "ops": make_record(ctx, people, "Ops", body="AND NEAR foo-bar qq:zz x*y"),
        "deep": make_record(ctx, people, "Deep", outer={"inner": [{"word": "kumquat"}]}),
        "keys": make_record(ctx, people, "Keys only", other="value"),
        "people": make_collection(ctx, "unused"),
    }


def test_text_ignores_case_and_accents_and_matches_prefixes(notes):
    assert titles(search(text="zoe muller"))[0] == "Zoë Müller"
    assert set(titles(search(text="ZOË MÜL"))) == {"Zoë Müller", "Bob"}
    assert titles(search(text="interv", collection_id=notes["zoe"].collection_id))[:2] != []


def test_text_ranks_title_matches_first(notes):
    assert titles(search(text="zoe muller")) == ["Zoë Müller", "Bob"]


def test_text_needs_every_word(notes):
    assert titles(search(text="zoe engineer")) == ["Zoë Müller"]
    assert titles(search(text="zoe kumquat")) == []


def test_text_indexes_nested_values_and_numbers_but_not_keys(notes):
    assert titles(search(text="kumquat")) == ["Deep"]
    assert titles(search(text="2024")) == ["Bob"]
    assert titles(search(text="notes")) == [], "key names are not indexed"
    assert titles(search(text="inner")) == []


@pytest.mark.parametrize("text", ["AND", "NEAR", "foo-bar", "qq:zz", "x*", "AND NEAR", '"x'])
def test_text_operators_and_punctuation_are_plain_text(notes, text):
    assert titles(search(text=text)) == ["Ops"]


def test_text_snippet_brackets_the_matched_words(notes):
    result = search(text="kumquat")
    snippet = result["records"][0]["match_snippet"]
    assert "[kumquat]" in snippet and len(snippet) <= 300


def test_text_combines_with_query_filters_and_collection(notes):
    assert titles(search(text="interview", query="bo")) == ["Bob"]
    assert titles(search(text="interview", filters={"role": "Engineer"})) == ["Zoë Müller"]
    assert titles(search(text="interview", collection_id=notes["people"].pk)) == []


def test_text_excludes_archived_records(notes, ctx):
    services.record_archive(ctx=ctx, record_id=notes["deep"].pk, expected_version=1)
    assert titles(search(text="kumquat")) == []


def test_text_pages_with_cursor(ctx):
    items = make_collection(ctx, "items")
    created = {
        make_record(ctx, items, f"Widget {i}", note="widget " * (i % 4)).pk for i in range(9)
    }
    seen = all_pages(text="widget", limit=2)
    assert len(seen) == len(set(seen)) == 9 and set(seen) == created


def test_text_bounds(ctx):
    refused("INVALID_INPUT", "text", search, text="x" * 301)
    refused("INVALID_INPUT", "text", search, text=" -- ** ")
    refused("INVALID_INPUT", "text", search, text=42)


def test_text_uses_only_the_first_16_words(notes):
    words = " ".join(["zoe"] * 16 + ["nonexistentword"])
    assert titles(search(text=words))[0] == "Zoë Müller"


@pytest.mark.sqlite  # PostgreSQL always has full-text search
def test_text_is_unsupported_without_fts5(notes, monkeypatch):
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE records_record_fts RENAME TO records_record_fts_away")
    try:
        refused("UNSUPPORTED", "text", search, text="zoe")
        assert search(query="zoë")["count"] == 1, "everything else still works"
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE records_record_fts_away RENAME TO records_record_fts")


def test_text_cannot_be_ordered_by_a_field(notes):
    refused(
        "INVALID_INPUT",
        "order_by",
        search,
        text="zoe",
        order_by={"field": ["year"], "type": "number"},
    )


# --- where -----------------------------------------------------------------------------------


@pytest.fixture
def offers(ctx):
    offers = make_collection(ctx, "offers")

    def offer(title, **data):
        return make_record(ctx, offers, title, **data)

    return {
        "num": offer("num", ctc=38, tags=["remote", "senior"], city="Pune", when="2026-10-03"),
        "float": offer("float", ctc=38.0, tags=["onsite"], city="Delhi", when="2026-09-30"),
        "text": offer("text", ctc="38", city="pune", when="2026-11-01T10:00:00Z"),
        "lpa": offer("lpa", ctc="38 LPA", flag=True),
        "one": offer("one", ctc=1, flag=1),
        "null": offer("null", ctc=None),
        "nested": offer("nested", offer={"ctc": 40, "dotted.key": 5}, list=[{"ctc": 41}]),
        "none": offer("none"),
    }


def cond(field, op, *value):
    item = {"field": field, "op": op}
    if value:
        item["value"] = value[0]
    return item


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (cond(["ctc"], "eq", 38), {"num", "float"}),
        (cond(["ctc"], "eq", "38"), {"text"}),
        (cond(["ctc"], "ne", 38), {"one"}),
        (cond(["ctc"], "ne", "38"), {"lpa"}),
        (cond(["ctc"], "gt", 1), {"num", "float"}),
        (cond(["ctc"], "gte", 1), {"num", "float", "one"}),
        (cond(["ctc"], "lt", 38), {"one"}),
        (cond(["ctc"], "lte", 38.0), {"num", "float", "one"}),
        (cond(["ctc"], "between", [2, 38]), {"num", "float"}),
        (cond(["ctc"], "between", ["37", "39"]), {"text", "lpa"}),
        (cond(["ctc"], "in", [1, "38"]), {"one", "text"}),
        (cond(["ctc"], "contains", "LPA"), {"lpa"}),
        (cond(["ctc"], "contains", "lpa"), set()),
        (cond(["tags"], "contains", "remote"), {"num"}),
        (cond(["tags"], "contains", "rem"), set()),
        (cond(["ctc"], "exists"), {"num", "float", "text", "lpa", "one", "null"}),
        (cond(["ctc"], "missing"), {"nested", "none"}),
        (cond(["flag"], "eq", True), {"lpa"}),
        (cond(["flag"], "eq", 1), {"one"}),
        (cond(["flag"], "ne", False), {"lpa"}),
        (cond(["offer", "ctc"], "gte", 40), {"nested"}),
        (cond(["offer", "dotted.key"], "eq", 5), {"nested"}),
        (cond(["list", "ctc"], "eq", 41), set()),
        (cond(["list", "0"], "exists"), set()),
        (cond(["when"], "gte", "2026-10-01"), {"num", "text"}),
        (cond(["when"], "lt", "2026-10-01"), {"float"}),
        (cond(["city"], "eq", "Pune"), {"num"}),
    ],
)
def test_where_is_typed(offers, condition, expected):
    assert set(titles(search(where=[condition], limit=100))) == expected


def test_where_conditions_are_anded(offers):
    result = search(where=[cond(["ctc"], "eq", 38), cond(["city"], "eq", "Delhi")])
    assert titles(result) == ["float"]


@pytest.mark.parametrize(
    ("where", "field"),
    [
        ("ctc > 3", "where"),
        ([{"field": "ctc", "op": "eq", "value": 1}], "where[0].field"),
        ([{"field": ["ctc"], "op": "like", "value": 1}], "where[0].op"),
        ([{"field": ["ctc"], "op": "eq"}], "where[0].value"),
        ([{"field": ["ctc"], "op": "exists", "value": 1}], "where[0].value"),
        ([{"field": ["ctc"], "op": "eq", "value": None}], "where[0].value"),
        ([{"field": ["ctc"], "op": "eq", "value": {"a": 1}}], "where[0].value"),
        ([{"field": ["ctc"], "op": "gt", "value": True}], "where[0].value"),
        ([{"field": ["ctc"], "op": "between", "value": [1, "9"]}], "where[0].value"),
        ([{"field": ["ctc"], "op": "between", "value": [9, 1]}], "where[0].value"),
        ([{"field": ["ctc"], "op": "in", "value": []}], "where[0].value"),
        ([{"field": ['c"tc'], "op": "eq", "value": 1}], "where[0].field"),
        ([{"field": ["c\\tc"], "op": "eq", "value": 1}], "where[0].field"),
        ([{"field": ["c\x01tc"], "op": "eq", "value": 1}], "where[0].field"),
        ([{"field": ["ctc"], "op": "eq", "value": 1, "extra": 1}], "where[0]"),
        ([cond(["a"], "exists")] * 21, "where"),
    ],
)
def test_where_refuses_bad_conditions(ctx, where, field):
    refused("INVALID_INPUT", field, search, where=where)


def test_where_values_are_parameters(offers):
    sneaky = "x' OR 1=1 --"
    assert titles(search(where=[cond(["city"], "eq", sneaky)])) == []
    assert titles(search(where=[cond(["it's"], "exists")])) == []


# --- linked_to -------------------------------------------------------------------------------


def test_linked_to_respects_direction_and_types(hiring):
    def found(**linked):
        return set(titles(search(linked_to={"record_id": hiring.kirat_backend.pk, **linked})))

    assert found() == {"Kirat", "Junior Backend", "Kirat backend coding interview"}
    assert found(direction="incoming") == {"Kirat", "Junior Backend"}
    assert found(direction="outgoing") == {"Kirat backend coding interview"}
    assert found(relationship_types=["opening"]) == {"Junior Backend"}


def test_linked_to_from_the_other_end(hiring):
    result = search(linked_to={"record_id": hiring.kirat.pk, "direction": "outgoing"})
    assert set(titles(result)) == {"Kirat - Junior Backend", "Kirat - Senior Frontend"}
    assert titles(search(linked_to={"record_id": hiring.kirat.pk, "direction": "incoming"})) == []


def test_linked_to_refuses_unknown_records_and_bad_shapes(hiring, other_ctx):
    foreign = make_record(other_ctx, make_collection(other_ctx, "people"), "Kirat")
    refused("NOT_FOUND", None, search, linked_to={"record_id": foreign.pk})
    refused("INVALID_INPUT", "linked_to.record_id", search, linked_to={"record_id": "kirat"})
    refused("INVALID_INPUT", "linked_to", search, linked_to={"record_id": hiring.kirat.pk, "x": 1})
    refused(
        "INVALID_INPUT",
        "linked_to.direction",
        search,
        linked_to={"record_id": hiring.kirat.pk, "direction": "up"},
    )


def test_linked_to_combines_with_text(hiring):
    result = search(text="kirat", linked_to={"record_id": hiring.backend.pk})
    assert titles(result) == ["Kirat - Junior Backend"]


# --- order_by --------------------------------------------------------------------------------


def test_order_by_number_excludes_missing_and_other_types(offers):
    result = search(order_by={"field": ["ctc"], "type": "number", "direction": "desc"})
    assert [item["sort_value"] for item in result["records"]] == [38, 38.0, 1]
    assert set(titles(result)) == {"num", "float", "one"}


def test_order_by_string_uses_code_point_order(offers):
    result = search(order_by={"field": ["city"], "type": "string"})
    assert [item["sort_value"] for item in result["records"]] == ["Delhi", "Pune", "pune"]


def test_order_by_pages_are_stable(ctx):
    items = make_collection(ctx, "items")
    for index in range(15):
        make_record(ctx, items, f"Item {index}", rank=index % 4, score=index / 3)
    make_record(ctx, items, "No rank")
    for order_by in (
        {"field": ["rank"], "type": "number"},
        {"field": ["rank"], "type": "number", "direction": "desc"},
        {"field": ["score"], "type": "number", "direction": "desc"},
    ):
        whole = search(order_by=order_by, limit=100)
        paged = all_pages(order_by=order_by, limit=4)
        assert paged == [item["record_id"] for item in whole["records"]]
        assert len(paged) == 15
        values = [item["sort_value"] for item in whole["records"]]
        assert values == sorted(values, reverse=order_by.get("direction") == "desc")


@pytest.mark.parametrize(
    ("order_by", "field"),
    [
        ({"field": ["a"]}, "order_by"),
        ({"field": ["a"], "type": "date"}, "order_by.type"),
        ({"field": ["a"], "type": "number", "direction": "up"}, "order_by.direction"),
        ({"field": "a", "type": "number"}, "order_by.field"),
        ("a", "order_by"),
    ],
)
def test_order_by_refuses_bad_input(ctx, order_by, field):
    refused("INVALID_INPUT", field, search, order_by=order_by)


def test_order_by_cursor_is_bound_to_the_order(offers):
    first = search(order_by={"field": ["ctc"], "type": "number"}, limit=1)
    refused(
        "INVALID_INPUT",
        "cursor",
        search,
        order_by={"field": ["ctc"], "type": "number", "direction": "desc"},
        cursor=first["next_cursor"],
    )


def test_record_updates_move_between_where_matches(offers, ctx):
    services.record_update(
        ctx=ctx, record_id=offers["text"].pk, changes={"ctc": 38}, expected_version=1
    )
    assert set(titles(search(where=[cond(["ctc"], "eq", 38)]))) == {"num", "float", "text"}
    assert titles(search(text="38", where=[cond(["ctc"], "eq", 38)], limit=100)) != []
