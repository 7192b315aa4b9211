"""Catalog, context, histories and title/filter search: bounds, cursors and isolation."""

from __future__ import annotations

import base64
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from records import selectors, services
from records.errors import AnchorError
from records.selectors import catalog
from tests.conftest import OTHER_WORKSPACE, WORKSPACE, make_collection, make_record
from tests.records.helpers import refused


def titles(result) -> list[str]:
    return [item["title"] for item in result["records"]]


def search(**kwargs):
    return selectors.search_records(workspace_id=WORKSPACE, **kwargs)


# --- collection_list -------------------------------------------------------------------------


def test_collection_list_counts_active_records_only(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="persons")
    result = selectors.collection_list(workspace_id=WORKSPACE)
    people = next(c for c in result["collections"] if c["name"] == "people")
    assert people["active_record_count"] == 3, "archived Abhishek must not be counted"
    assert people["aliases"] == ["persons"]
    assert people["purpose"] == "People we are hiring or working with"
    assert people["typical_fields"] == ["notes"]
    assert result["truncated"] is False
    assert [c["name"] for c in result["collections"]] == sorted(
        c["name"] for c in result["collections"]
    )


def test_collection_list_query_count_does_not_grow_with_rows(ctx):
    collection = make_collection(ctx, "expenses")
    make_record(ctx, collection, "Taxi")
    with CaptureQueriesContext(connection) as few:
        selectors.collection_list(workspace_id=WORKSPACE)
    for index in range(30):
        extra = make_collection(ctx, f"bucket {index}")
        services.collection_alias_add(ctx=ctx, collection_id=extra.pk, alias=f"alias {index}")
        make_record(ctx, extra, f"Item {index}")
    with CaptureQueriesContext(connection) as many:
        result = selectors.collection_list(workspace_id=WORKSPACE)
    assert result["count"] == 31
    assert len(many) == len(few) == 3


def test_collection_entry_is_the_listed_entry_even_past_the_lists_cap(
    hiring, ctx, other_ctx, monkeypatch
):
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="persons")
    listed = selectors.collection_list(workspace_id=WORKSPACE)["collections"]
    for entry in listed:
        one = selectors.collection_entry(
            workspace_id=WORKSPACE, collection_id=entry["collection_id"]
        )
        assert one == entry
    monkeypatch.setattr(catalog, "MAX_COLLECTIONS", 1)
    last = listed[-1]
    assert last not in selectors.collection_list(workspace_id=WORKSPACE)["collections"]
    past_the_cap = selectors.collection_entry(
        workspace_id=WORKSPACE, collection_id=last["collection_id"]
    )
    assert past_the_cap == last
    foreign = make_collection(other_ctx, "foreign")
    with pytest.raises(AnchorError) as refused_here:
        selectors.collection_entry(workspace_id=WORKSPACE, collection_id=foreign.pk, field="uri")
    assert refused_here.value.code == "NOT_FOUND"
    assert refused_here.value.details["field"] == "uri"
    assert refused_here.value.message.startswith(f"uri: no collection with ID {foreign.pk!r}")


# --- record_context --------------------------------------------------------------------------


def test_record_context_returns_full_record_links_and_events(hiring):
    result = selectors.record_context(workspace_id=WORKSPACE, record_id=hiring.kirat_backend.pk)
    record = result["record"]
    assert record["title"] == "Kirat - Junior Backend"
    assert record["data"] == {"stage": "interview"}
    assert record["collection_name"] == "applications"
    assert record["version"] == 1 and "status" not in record, "active: left out"
    assert record["created_by"] == "local-agent"
    assert "aliases" not in record and "archived_at" not in record, "empty: left out"
    outgoing = {link["relationship_type"]: link for link in result["links"]["outgoing"]}
    assert outgoing["applicant"]["record_id"] == hiring.kirat.pk
    assert outgoing["applicant"]["title"] == "Kirat"
    assert outgoing["opening"]["collection"] == "openings"
    assert "archived" not in outgoing["opening"], "only an archived end says so"
    incoming = result["links"]["incoming"]
    assert [link["record_id"] for link in incoming] == [hiring.coding_interview.pk]
    kinds = [event["kind"] for event in result["events"]]
    assert kinds[-1] == "record.created", "events are newest first"
    assert "relationship.created" in kinds
    assert "events_omitted" not in result and "events_truncated" not in result, "said when so"


def hub_with_spokes(ctx, hiring, count=4):
    """A person "Hub" owning `count` openings, each reporting back to it: links both ways."""
    hub = make_record(ctx, hiring.people, "Hub")
    spokes = [make_record(ctx, hiring.openings, f"Spoke {index}") for index in range(count)]
    for spoke in spokes:
        services.relationship_create(
            ctx=ctx, source_id=hub.pk, relationship_type="owns", target_id=spoke.pk
        )
        services.relationship_create(
            ctx=ctx, source_id=spoke.pk, relationship_type="reports_to", target_id=hub.pk
        )
    return hub, spokes


def without(value: dict, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in value.items() if k not in keys}


def test_record_contexts_give_each_record_what_record_context_gives(hiring, ctx, other_ctx):
    # Aliases, an archived record, links both ways and a record capped at 2 links a side.
    services.record_alias_add(ctx=ctx, record_id=hiring.kirat.pk, alias="KS", expected_version=1)
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    hub, spokes = hub_with_spokes(ctx, hiring)
    foreign = make_record(other_ctx, make_collection(other_ctx, "people"), "Kirat")
    wanted = [hub.pk, hiring.kirat.pk, hiring.abhishek.pk, hiring.kirat_backend.pk, foreign.pk]
    for limit in (2, 20):
        batched = selectors.record_contexts(
            workspace_id=WORKSPACE, record_ids=wanted, relationship_limit=limit
        )
        one_by_one = {
            record_id: selectors.record_context(
                workspace_id=WORKSPACE,
                record_id=record_id,
                relationship_limit=limit,
                event_limit=0,
            )
            for record_id in wanted[:-1]
        }
        # But for what one record's context leaves out as asked for or ordinary (its ID, its
        # collection's, an active status, a first version's update time): a search hit keeps it.
        said = ("record_id", "collection_id", "status", "updated_at")
        assert [without(c["record"], said) for c in batched.values()] == [
            without(c["record"], said) for c in one_by_one.values()
        ]
        assert [without(c, ("record",)) for c in batched.values()] == [
            without(c, ("record",)) for c in one_by_one.values()
        ]
        assert one_by_one[hiring.abhishek.pk]["record"]["status"] == "archived", "not ordinary"
        assert list(batched) == wanted[:-1], "in the order asked; another workspace's left out"
    assert "outgoing_truncated" not in batched[hub.pk]["links"], "said only when so"
    capped = selectors.record_contexts(
        workspace_id=WORKSPACE, record_ids=[hub.pk], relationship_limit=2
    )
    assert capped[hub.pk]["links"]["incoming_truncated"] is True


def test_links_now_are_those_the_as_of_path_lists_as_of_now(hiring, ctx):
    # The current links come from one raw statement; the as-of path lists them through the
    # ORM. As of a moment after every write, both must give the same links, byte for byte.
    hub, spokes = hub_with_spokes(ctx, hiring)
    services.record_archive(ctx=ctx, record_id=spokes[-1].pk, expected_version=1)
    after = timezone.now().isoformat()
    for limit in (2, 3, 20):
        now = selectors.record_context(
            workspace_id=WORKSPACE, record_id=hub.pk, relationship_limit=limit, event_limit=0
        )["links"]
        as_of = selectors.record_context(
            workspace_id=WORKSPACE,
            record_id=hub.pk,
            relationship_limit=limit,
            event_limit=0,
            as_of=after,
        )["links"]
        del as_of["note"]
        assert json.dumps(now) == json.dumps(as_of)
        assert len(now["outgoing"]) == min(limit, 4)


def test_record_contexts_cost_the_same_queries_for_two_records_or_twenty(ctx):
    collection = make_collection(ctx, "tasks")
    records = [make_record(ctx, collection, f"Task {index}") for index in range(20)]
    for first, second in zip(records, records[1:], strict=False):
        services.relationship_create(
            ctx=ctx, source_id=first.pk, relationship_type="blocks", target_id=second.pk
        )

    def queries(count: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            contexts = selectors.record_contexts(
                workspace_id=WORKSPACE, record_ids=[r.pk for r in records[:count]]
            )
        assert len(contexts) == count
        return len(captured)

    assert queries(20) == queries(2) == 3  # records, their aliases, links both ways


def test_record_context_caps_links_per_direction(hiring):
    result = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat.pk, relationship_limit=1
    )
    links = result["links"]
    assert len(links["incoming"]) == 1 and links["incoming_truncated"] is True
    assert links["outgoing"] == [] and "outgoing_truncated" not in links


def test_record_context_event_limit_zero_omits_history(hiring):
    result = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat.pk, event_limit=0
    )
    assert result["events"] is None and result["events_omitted"] is True


def test_record_context_event_cap_hands_over_to_history(hiring):
    result = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat_backend.pk, event_limit=1
    )
    assert len(result["events"]) == 1 and result["events_truncated"] is True
    rest = selectors.record_history(
        workspace_id=WORKSPACE,
        record_id=hiring.kirat_backend.pk,
        cursor=result["history_next_cursor"],
    )
    ids = [result["events"][0]["event_id"]] + [event["event_id"] for event in rest["events"]]
    assert len(ids) == len(set(ids)) == 3


def test_record_context_shows_archived_records(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    result = selectors.record_context(workspace_id=WORKSPACE, record_id=hiring.abhishek.pk)
    assert result["record"]["status"] == "archived"
    assert result["record"]["archived_at"] is not None
    assert result["events"][0]["kind"] == "record.archived"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("relationship_limit", 0),
        ("relationship_limit", 101),
        ("relationship_limit", True),
        ("event_limit", -1),
        ("event_limit", 101),
    ],
)
def test_record_context_bounds(hiring, field, value):
    refused(
        "INVALID_INPUT",
        field,
        selectors.record_context,
        workspace_id=WORKSPACE,
        record_id=hiring.kirat.pk,
        **{field: value},
    )


def test_record_context_refuses_bad_and_unknown_ids(hiring):
    refused(
        "INVALID_INPUT",
        "record_id",
        selectors.record_context,
        workspace_id=WORKSPACE,
        record_id="Kirat",
    )
    refused(
        "NOT_FOUND",
        None,
        selectors.record_context,
        workspace_id=WORKSPACE,
        record_id="00000000-0000-4000-8000-000000000000",
    )


# --- histories -------------------------------------------------------------------------------


def _history_ids(record_id: str, limit: int) -> list[int]:
    seen: list[int] = []
    cursor = None
    while True:
        page = selectors.record_history(
            workspace_id=WORKSPACE, record_id=record_id, limit=limit, cursor=cursor
        )
        seen += [event["event_id"] for event in page["events"]]
        if not page["has_more"]:
            return seen
        cursor = page["next_cursor"]


def test_record_history_pages_newest_first_without_gaps(hiring, ctx):
    record = hiring.kirat
    for version in range(1, 8):
        services.record_update(
            ctx=ctx, record_id=record.pk, changes={"step": version}, expected_version=version
        )
    everything = _history_ids(record.pk, limit=100)
    assert len(everything) == 8
    assert everything == sorted(everything, reverse=True)
    assert _history_ids(record.pk, limit=3) == everything


def test_record_history_shows_rationale_and_labels_clarification(hiring, ctx):
    from dataclasses import replace

    told = replace(ctx, decision_reason="User said so", clarification="Kirat is the engineer")
    services.record_update(
        ctx=told, record_id=hiring.kirat.pk, changes={"a": 1}, expected_version=1
    )
    event = selectors.record_history(workspace_id=WORKSPACE, record_id=hiring.kirat.pk)["events"][0]
    assert event["decision_reason"] == "User said so"
    assert event["agent_reported_clarification"] == "Kirat is the engineer"
    assert event["before"]["data"] == {"email": "kirat@example.com"}
    assert event["after"]["data"] == {"email": "kirat@example.com", "a": 1}


def test_history_cursor_is_bound_to_its_record(hiring, ctx):
    services.record_update(ctx=ctx, record_id=hiring.kirat.pk, changes={"a": 1}, expected_version=1)
    page = selectors.record_history(workspace_id=WORKSPACE, record_id=hiring.kirat.pk, limit=1)
    refused(
        "INVALID_INPUT",
        "cursor",
        selectors.record_history,
        workspace_id=WORKSPACE,
        record_id=hiring.abhishek.pk,
        cursor=page["next_cursor"],
    )


def test_collection_history_holds_collection_events_only(hiring, ctx):
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="persons")
    result = selectors.collection_history(workspace_id=WORKSPACE, collection_id=hiring.people.pk)
    assert [event["kind"] for event in result["events"]] == [
        "collection.alias_added",
        "collection.created",
    ]


@pytest.mark.parametrize("limit", [0, 101, "5"])
def test_history_limit_bounds(hiring, limit):
    refused(
        "INVALID_INPUT",
        "limit",
        selectors.collection_history,
        workspace_id=WORKSPACE,
        collection_id=hiring.people.pk,
        limit=limit,
    )


# --- search: title query ---------------------------------------------------------------------


def test_query_is_a_unicode_casefolded_literal_substring(ctx):
    people = make_collection(ctx, "people")
    make_record(ctx, people, "Zoë Straße")
    make_record(ctx, people, "ΣΟΦΙΑ")
    make_record(ctx, people, "100% done_now")
    make_record(ctx, people, "100 percent donexnow")
    assert titles(search(query="STRASSE")) == ["Zoë Straße"]
    assert titles(search(query="zoË")) == ["Zoë Straße"]
    assert titles(search(query="σοφια")) == ["ΣΟΦΙΑ"]
    assert titles(search(query="0%")) == ["100% done_now"]
    assert titles(search(query="e_n")) == ["100% done_now"]
    assert titles(search(query="zoe")) == [], "accents are not folded by the title query"


def test_query_casefold_matches_python_for_every_folded_character(ctx):
    """Every character casefolding changes, in one title each, found by its folded form."""
    from records.selectors.casefold import _tables

    multi, _, single = _tables()
    people = make_collection(ctx, "people")
    chars = list(multi) + list(single)
    for start in range(0, len(chars), 300):
        make_record(ctx, people, "".join(chars[start : start + 300]))
    for start in range(0, len(chars), 30):  # 30 divides 300: no chunk spans titles
        chunk = "".join(chars[start : start + 30])
        found = search(query=chunk.casefold(), limit=100)
        assert found["count"] >= 1, f"casefold mismatch around {chunk!r}"


def test_casefold_tables_are_complete_and_safe_in_a_bracket_expression():
    import sys

    from records.selectors.casefold import LAST_FOLDED_CODE_POINT, _tables

    beyond = range(LAST_FOLDED_CODE_POINT + 1, sys.maxunicode + 1)
    assert all(chr(cp).casefold() == chr(cp) for cp in beyond)
    multi, residual, single = _tables()
    assert not set("[]\\^-") & (set(multi) | set(residual) | set(single))


def test_query_bounds(ctx):
    refused("INVALID_INPUT", "query", search, query="   ")
    refused("INVALID_INPUT", "query", search, query="x" * 301)
    refused("INVALID_INPUT", "query", search, query=5)


# --- search: filters -------------------------------------------------------------------------


@pytest.fixture
def typed(ctx):
    things = make_collection(ctx, "things")
    return {
        "int": make_record(ctx, things, "int", n=1),
        "float": make_record(ctx, things, "float", n=1.0),
        "true": make_record(ctx, things, "true", n=True),
        "string": make_record(ctx, things, "string", n="1"),
        "null": make_record(ctx, things, "null", n=None),
        "missing": make_record(ctx, things, "missing", other=1),
        "nested": make_record(ctx, things, "nested", n={"b": [1, {"c": "X"}], "a": None}),
        "dotted": make_record(ctx, things, "dotted", **{"a.b": "dot"}),
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, ["int"]),
        (1.0, ["float"]),
        (True, ["true"]),
        ("1", ["string"]),
        (None, ["null"]),
        ({"a": None, "b": [1, {"c": "X"}]}, ["nested"]),
        ({"a": None, "b": [1, {"c": "x"}]}, []),
        ({"b": [1, {"c": "X"}]}, []),
    ],
)
def test_filters_compare_canonical_json(typed, value, expected):
    assert titles(search(filters={"n": value})) == expected


def test_filters_dots_are_literal_and_empty_means_no_restriction(typed):
    assert titles(search(filters={"a.b": "dot"})) == ["dotted"]
    assert search(filters={})["count"] == len(typed)
    assert titles(search(filters={"n": 1, "other": 1})) == []


def test_filters_must_be_an_object(ctx):
    refused("INVALID_INPUT", "filters", search, filters=["n", 1])
    refused("INVALID_INPUT", "filters", search, filters={'bad"key': 1})


# --- search: order, pages, previews, archives ------------------------------------------------


def test_search_pages_cover_everything_once_in_creation_order(ctx):
    items = make_collection(ctx, "items")
    created = [make_record(ctx, items, f"Item {index:02}").pk for index in range(23)]
    seen: list[str] = []
    cursor = None
    while True:
        page = search(collection_id=items.pk, limit=5, cursor=cursor)
        seen += [item["record_id"] for item in page["records"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == created


def test_search_excludes_archived_records(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    assert "Abhishek" not in titles(search(collection_id=hiring.people.pk))
    assert titles(search(query="abhishek")) == ["Abhishek - Junior Backend"]


def test_search_preview_is_capped_at_500_characters(ctx):
    notes = make_collection(ctx, "notes")
    make_record(ctx, notes, "Long", body="x" * 2000)
    make_record(ctx, notes, "Short", body="y")
    long, short = search(collection_id=notes.pk)["records"]
    assert len(long["data_preview"]) == 500 and long["data_truncated"] is True
    assert short["data_preview"] == '{"body":"y"}' and short["data_truncated"] is False


def test_cursor_is_bound_to_parameters_and_workspace(ctx, other_ctx):
    items = make_collection(ctx, "items")
    for index in range(3):
        make_record(ctx, items, f"Item {index}")
    cursor = search(collection_id=items.pk, limit=1)["next_cursor"]
    assert search(collection_id=items.pk, limit=2, cursor=cursor)["count"] == 2
    refused("INVALID_INPUT", "cursor", search, query="item", limit=1, cursor=cursor)
    refused(
        "INVALID_INPUT",
        "cursor",
        selectors.search_records,
        workspace_id=OTHER_WORKSPACE,
        limit=1,
        cursor=search(limit=1)["next_cursor"],
    )


@pytest.mark.parametrize(
    "cursor",
    ["not a cursor", "", "x" * 3000, base64.urlsafe_b64encode(b"[1,2]").decode()],
)
def test_malformed_cursors_are_refused(ctx, cursor):
    refused("INVALID_INPUT", "cursor", search, cursor=cursor)


def test_tampered_cursor_key_is_refused(ctx):
    items = make_collection(ctx, "items")
    for index in range(3):
        make_record(ctx, items, f"Item {index}")
    cursor = search(limit=1)["next_cursor"]
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    payload["k"][0] = "yesterday"
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
    refused("INVALID_INPUT", "cursor", search, limit=1, cursor=forged)


@pytest.mark.parametrize("limit", [0, 101, 2.5, None])
def test_search_limit_bounds(ctx, limit):
    refused("INVALID_INPUT", "limit", search, limit=limit)


def test_search_refuses_bad_collection_ids(ctx, other_ctx):
    foreign = make_collection(other_ctx, "foreign")
    refused("INVALID_INPUT", "collection_id", search, collection_id="people")
    refused("NOT_FOUND", None, search, collection_id=foreign.pk)


def test_search_query_count_does_not_grow_with_rows(ctx):
    items = make_collection(ctx, "items")
    make_record(ctx, items, "Item first", tag="a")
    with CaptureQueriesContext(connection) as few:
        search(collection_id=items.pk, query="item", filters={"tag": "a"})
    for index in range(40):
        make_record(ctx, items, f"Item {index}", tag="a")
    with CaptureQueriesContext(connection) as many:
        result = search(collection_id=items.pk, query="item", filters={"tag": "a"}, limit=100)
    assert result["count"] == 41
    assert len(many) == len(few) == 2, [q["sql"][:80] for q in many.captured_queries]


# --- workspace isolation ---------------------------------------------------------------------


def test_every_read_is_confined_to_its_workspace(ctx, other_ctx):
    mine = make_collection(ctx, "people")
    theirs = make_collection(other_ctx, "people")
    kirat = make_record(ctx, mine, "Kirat", secret="mine")
    other_kirat = make_record(other_ctx, theirs, "Kirat", secret="theirs")
    for workspace, own, foreign, own_collection, foreign_collection in (
        (WORKSPACE, kirat, other_kirat, mine, theirs),
        (OTHER_WORKSPACE, other_kirat, kirat, theirs, mine),
    ):
        listed = selectors.collection_list(workspace_id=workspace)["collections"]
        assert [c["collection_id"] for c in listed] == [own_collection.pk]
        found = selectors.search_records(workspace_id=workspace, query="kirat")["records"]
        assert [item["record_id"] for item in found] == [own.pk]
        found = selectors.search_records(workspace_id=workspace, text="kirat")["records"]
        assert [item["record_id"] for item in found] == [own.pk]
        for call, arguments in (
            (selectors.record_context, {"record_id": foreign.pk}),
            (selectors.record_history, {"record_id": foreign.pk}),
            (selectors.collection_history, {"collection_id": foreign_collection.pk}),
            (selectors.search_records, {"collection_id": foreign_collection.pk}),
        ):
            refused("NOT_FOUND", None, call, workspace_id=workspace, **arguments)
