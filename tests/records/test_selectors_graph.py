"""traverse, aggregate and as-of context reads."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records import selectors, services
from records.models import RecordVersion
from tests.conftest import WORKSPACE, link, make_collection, make_record
from tests.records.helpers import refused


def walk(start, **kwargs):
    return selectors.traverse(workspace_id=WORKSPACE, start_record_id=start.pk, **kwargs)


def by_title(result) -> dict[str, dict]:
    return {node["title"]: node for node in result["records"]}


# --- traverse --------------------------------------------------------------------------------


def test_traverse_follows_the_hiring_chain_with_depths_and_paths(hiring):
    result = walk(hiring.kirat, max_depth=3)
    nodes = by_title(result)
    assert nodes["Kirat - Junior Backend"]["depth"] == 1
    assert nodes["Junior Backend"]["depth"] == 2
    assert nodes["Kirat backend coding interview"]["depth"] == 2
    assert nodes["Abhishek - Junior Backend"]["depth"] == 3
    path = nodes["Junior Backend"]["path"]
    assert [(s["relationship_type"], s["direction"], s["title"]) for s in path] == [
        ("applicant", "incoming", "Kirat - Junior Backend"),
        ("opening", "outgoing", "Junior Backend"),
    ]
    assert result["start"]["record_id"] == hiring.kirat.pk and result["start"]["depth"] == 0
    assert result["truncated"] is False
    assert result["reached_count"] == len(result["records"])


def test_traverse_directions_and_types(hiring):
    assert walk(hiring.kirat, direction="outgoing")["records"] == []
    incoming = walk(hiring.kirat, direction="incoming", max_depth=4)
    assert set(by_title(incoming)) == {
        "Kirat - Junior Backend",
        "Kirat - Senior Frontend",
        "Kirat backend coding interview",
    }
    typed = walk(hiring.kirat, relationship_types=["applicant"], max_depth=4)
    assert set(by_title(typed)) == {"Kirat - Junior Backend", "Kirat - Senior Frontend"}


def test_traverse_collection_filter_returns_but_still_walks_through(hiring):
    result = walk(hiring.kirat, collection_id=hiring.openings.pk)
    assert set(by_title(result)) == {"Junior Backend", "Senior Frontend"}
    assert result["reached_count"] == 5
    assert result["returned_count"] == 2
    edge_targets = {edge["target_id"] for edge in result["edges"]}
    assert hiring.backend.pk in edge_targets


def test_traverse_is_safe_on_cycles(ctx):
    nodes = make_collection(ctx, "nodes")
    a, b, c = (make_record(ctx, nodes, name) for name in "abc")
    link(ctx, a, "next", b)
    link(ctx, b, "next", c)
    link(ctx, c, "next", a)
    result = walk(a, max_depth=4)
    assert sorted(node["title"] for node in result["records"]) == ["b", "c"]
    assert len(result["edges"]) == 3
    assert {n["title"]: n["depth"] for n in result["records"]} == {"b": 1, "c": 1}


def test_traverse_truncates_at_max_nodes(ctx):
    hub_collection = make_collection(ctx, "hubs")
    hub = make_record(ctx, hub_collection, "hub")
    for index in range(8):
        link(ctx, make_record(ctx, hub_collection, f"spoke {index}"), "of", hub)
    result = walk(hub, max_nodes=5)
    assert len(result["records"]) == 5 and result["reached_count"] == 5
    assert result["truncated"] is True and result["truncation"]["max_nodes"] is True
    assert len(result["edges"]) == 5, "edges to records left out are not listed"


def test_traverse_flags_archived_records(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.kirat_frontend.pk, expected_version=1)
    node = by_title(walk(hiring.kirat))["Kirat - Senior Frontend"]
    assert node["archived_at"] is not None
    assert by_title(walk(hiring.kirat))["Senior Frontend"]["depth"] == 2, "walks through it"


def test_traverse_issues_one_query_per_level(ctx):
    tree = make_collection(ctx, "tree")
    root = make_record(ctx, tree, "root")
    level = [root]
    for depth in range(3):
        next_level = []
        for parent in level:
            for index in range(3):
                child = make_record(ctx, tree, f"{depth}-{index}")
                link(ctx, child, "child_of", parent)
                next_level.append(child)
        level = next_level
    with CaptureQueriesContext(connection) as queries:
        result = walk(root, max_depth=3, max_nodes=200)
    assert result["reached_count"] == 3 + 9 + 27
    assert len(queries) == 1 + 3, [q["sql"][:60] for q in queries.captured_queries]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 5}, "max_depth"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"max_nodes": 201}, "max_nodes"),
        ({"direction": "sideways"}, "direction"),
        ({"relationship_types": "applicant"}, "relationship_types"),
        ({"relationship_types": []}, "relationship_types"),
        ({"collection_id": "people"}, "collection_id"),
    ],
)
def test_traverse_bounds(hiring, arguments, field):
    refused(
        "INVALID_INPUT",
        field,
        selectors.traverse,
        workspace_id=WORKSPACE,
        start_record_id=hiring.kirat.pk,
        **arguments,
    )


def test_traverse_refuses_unknown_start(hiring):
    refused(
        "NOT_FOUND",
        None,
        selectors.traverse,
        workspace_id=WORKSPACE,
        start_record_id="00000000-0000-4000-8000-000000000000",
    )
    refused(
        "INVALID_INPUT",
        "start_record_id",
        selectors.traverse,
        workspace_id=WORKSPACE,
        start_record_id="kirat",
    )


# --- aggregate -------------------------------------------------------------------------------


@pytest.fixture
def expenses(ctx):
    expenses = make_collection(ctx, "expenses")
    vendors = make_collection(ctx, "vendors")
    acme, globex = make_record(ctx, vendors, "Acme"), make_record(ctx, vendors, "Globex")

    def spend(title, vendor=None, **data):
        record = make_record(ctx, expenses, title, **data)
        if vendor is not None:
            link(ctx, record, "paid_to", vendor)
        return record

    spend("taxi", acme, amount=10, date="2026-01-05", category="travel")
    spend("train", acme, amount=30.5, date="2026-01-20", category="travel")
    spend("hotel", globex, amount=200, date="2026-02-02", category="travel")
    spend("lunch", None, amount="95 LPA", date="2026-02-10", category="food")
    spend("snack", globex, date="soon", category="food")
    both = spend("shared", acme, amount=5, category=None)
    link(ctx, both, "paid_to", globex)
    return {"collection": expenses, "acme": acme, "globex": globex}


def totals(**kwargs):
    return selectors.aggregate(workspace_id=WORKSPACE, **kwargs)


def metric(group, op):
    return next(m for m in group["metrics"] if m["op"] == op)


def test_aggregate_reports_used_and_skipped_counts(expenses):
    result = totals(
        collection_id=expenses["collection"].pk,
        metrics=[
            {"op": "count"},
            {"op": "sum", "field": ["amount"]},
            {"op": "avg", "field": ["amount"]},
        ],
    )
    assert result["matched"] == 6
    total = metric(result["totals"], "sum")
    assert total["value"] == pytest.approx(245.5)
    assert (total["used"], total["skipped_missing"], total["skipped_non_numeric"]) == (4, 1, 1)
    assert metric(result["totals"], "avg")["value"] == pytest.approx(245.5 / 4)
    assert metric(result["totals"], "count")["value"] == 6


def test_aggregate_min_max_and_integer_sums(expenses):
    result = totals(
        collection_id=expenses["collection"].pk,
        where=[{"field": ["amount"], "op": "gte", "value": 10}],
        metrics=[{"op": "min", "field": ["amount"]}, {"op": "max", "field": ["amount"]}],
    )
    assert metric(result["totals"], "min")["value"] == 10
    assert metric(result["totals"], "max")["value"] == 200
    integers = totals(
        collection_id=expenses["collection"].pk,
        filters={"category": "travel"},
        where=[{"field": ["amount"], "op": "ne", "value": 30.5}],
        metrics=[{"op": "sum", "field": ["amount"]}],
    )
    assert metric(integers["totals"], "sum")["value"] == 210
    assert isinstance(metric(integers["totals"], "sum")["value"], int)


def test_aggregate_groups_by_field_value(expenses):
    result = totals(
        collection_id=expenses["collection"].pk,
        group_by={"field": ["category"]},
        metrics=[{"op": "sum", "field": ["amount"]}],
    )
    groups = {
        (g["key"], g.get("missing", False)): (g["count"], metric(g, "sum")["value"])
        for g in result["groups"]
    }
    assert groups[("travel", False)] == (3, pytest.approx(240.5))
    assert groups[("food", False)] == (2, None)
    assert groups[(None, False)] == (1, 5), "JSON null is its own group"
    assert result["group_count"] == 3 and result["groups_truncated"] is False
    for group in result["groups"]:
        m = metric(group, "sum")
        assert m["used"] + m["skipped_missing"] + m["skipped_non_numeric"] == group["count"]


def test_aggregate_buckets_iso_dates_by_month_and_year(expenses):
    result = totals(
        collection_id=expenses["collection"].pk, group_by={"field": ["date"], "bucket": "month"}
    )
    groups = {
        (g["key"], g.get("missing"), g.get("not_a_date")): g["count"] for g in result["groups"]
    }
    assert groups == {
        ("2026-01", None, None): 2,
        ("2026-02", None, None): 2,
        (None, None, True): 1,
        (None, True, None): 1,
    }
    yearly = totals(
        collection_id=expenses["collection"].pk, group_by={"field": ["date"], "bucket": "year"}
    )
    assert yearly["groups"][0] == {
        "key": "2026",
        "count": 4,
        "metrics": [{"op": "count", "value": 4}],
    }


def test_aggregate_groups_by_collection(expenses, hiring):
    result = totals(group_by={"collection": True})
    counts = {g["collection_name"]: g["count"] for g in result["groups"]}
    assert counts["expenses"] == 6 and counts["vendors"] == 2 and counts["people"] == 4


def test_aggregate_linked_groups_can_exceed_matched(expenses):
    result = totals(
        collection_id=expenses["collection"].pk,
        group_by={"linked": {"relationship_types": ["paid_to"], "direction": "outgoing"}},
        metrics=[{"op": "count"}, {"op": "sum", "field": ["amount"]}],
    )
    groups = {g.get("title"): g for g in result["groups"]}
    assert groups["Acme"]["count"] == 3
    assert metric(groups["Acme"], "sum")["value"] == pytest.approx(45.5)
    assert groups["Globex"]["count"] == 3
    assert groups[None]["not_linked"] is True and groups[None]["count"] == 1
    assert sum(g["count"] for g in result["groups"]) == 7 > result["matched"] == 6
    assert any("more than matched" in note for note in result["notes"])


def test_aggregate_limit_truncates_groups(expenses):
    result = totals(collection_id=expenses["collection"].pk, group_by={"field": ["title"]}, limit=1)
    assert result["group_count"] == 1 and result["groups"][0]["missing"] is True
    result = totals(
        collection_id=expenses["collection"].pk, group_by={"field": ["category"]}, limit=1
    )
    assert len(result["groups"]) == 1 and result["groups_truncated"] is True


def test_aggregate_with_text_and_linked_to(expenses):
    result = totals(text="travel", linked_to={"record_id": expenses["acme"].pk})
    assert result["matched"] == 2


def test_aggregate_of_nothing(expenses):
    result = totals(
        collection_id=expenses["collection"].pk,
        filters={"category": "none"},
        metrics=[{"op": "sum", "field": ["amount"]}],
    )
    assert result["matched"] == 0
    assert metric(result["totals"], "sum") == {
        "op": "sum",
        "field": ["amount"],
        "value": None,
        "used": 0,
        "skipped_missing": 0,
        "skipped_non_numeric": 0,
    }


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"metrics": []}, "metrics"),
        ({"metrics": [{"op": "median", "field": ["a"]}]}, "metrics[0].op"),
        ({"metrics": [{"op": "sum"}]}, "metrics[0].field"),
        ({"metrics": [{"op": "count", "field": ["a"]}]}, "metrics[0].field"),
        ({"group_by": {"field": ["a"], "collection": True}}, "group_by"),
        ({"group_by": {"field": ["a"], "bucket": "week"}}, "group_by.bucket"),
        ({"group_by": {"collection": False}}, "group_by.collection"),
        ({"group_by": {"linked": {"direction": "up"}}}, "group_by.linked.direction"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"where": [{"field": ["a"], "op": "eq"}]}, "where[0].value"),
    ],
)
def test_aggregate_refuses_bad_input(ctx, arguments, field):
    refused("INVALID_INPUT", field, selectors.aggregate, workspace_id=WORKSPACE, **arguments)


# --- as-of context ---------------------------------------------------------------------------


def test_record_context_as_of_returns_the_version_then(hiring, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"stage": "hired"}, expected_version=1
    )
    first = RecordVersion.objects.get(record_id=hiring.kirat.pk, version=1)
    second = RecordVersion.objects.get(record_id=hiring.kirat.pk, version=2)
    between = first.recorded_at + (second.recorded_at - first.recorded_at) / 2
    then = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat.pk, as_of=between.isoformat()
    )
    assert then["record"]["version"] == 1
    assert then["record"]["data"] == {"email": "kirat@example.com"}
    assert then["record"]["current_version"] == 2
    assert all(event["kind"] != "record.updated" for event in then["events"])
    now = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat.pk, as_of=second.recorded_at.isoformat()
    )
    assert now["record"]["data"]["stage"] == "hired"


def test_record_context_as_of_before_creation_is_not_found(hiring):
    before = hiring.kirat.created_at - timedelta(days=1)
    error = refused(
        "NOT_FOUND",
        "as_of",
        selectors.record_context,
        workspace_id=WORKSPACE,
        record_id=hiring.kirat.pk,
        as_of=before.isoformat(),
    )
    assert "did not exist yet" in error.message


def test_record_context_as_of_hides_later_links(hiring):
    before_links = hiring.kirat_backend.created_at.isoformat()
    result = selectors.record_context(
        workspace_id=WORKSPACE, record_id=hiring.kirat_backend.pk, as_of=before_links
    )
    assert result["links"]["outgoing"] == [] and "note" in result["links"]


@pytest.mark.parametrize("as_of", ["yesterday", 5, "2026-13-01"])
def test_record_context_as_of_must_be_iso(hiring, as_of):
    refused(
        "INVALID_INPUT",
        "as_of",
        selectors.record_context,
        workspace_id=WORKSPACE,
        record_id=hiring.kirat.pk,
        as_of=as_of,
    )
