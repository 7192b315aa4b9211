"""prepare_import / commit_import: duplicate review, decisions, links, staleness, replay."""

from __future__ import annotations

import pytest

from records import services
from records.errors import AnchorError
from records.models import AuditEvent, Record, Relationship
from tests.workflow.helpers import ok, refused, store_snapshot
from workflow import imports
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def prepare(collection, rows, **extra):
    return ok(
        "prepare_import",
        {"collection_id": collection.pk, "rows": rows, "decision_reason": "pasted list", **extra},
    )


def by_key(prepared):
    return {row["key"]: row for row in prepared["rows"]}


def test_rows_are_reviewed_against_names_and_each_other(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    before = store_snapshot()
    prepared = prepare(
        hiring.people,
        [
            {"key": "a", "title": "Rohan Mehta", "data": {"source": "referral"}},
            {"key": "b", "title": "Kriat", "data": {}},
            {"key": "c", "title": "Abhishek", "data": {}},
            {"key": "d", "title": "Rohan Mehta", "data": {}},
            {"key": "e", "title": "Priya Raman"},
        ],
    )
    assert store_snapshot() == before, "prepare_import writes nothing"
    rows = by_key(prepared)
    assert rows["a"]["status"] == "clean" and rows["e"]["status"] == "clean"
    assert rows["b"]["status"] == "possible_duplicate"
    assert rows["b"]["candidates"][0]["record_id"] == hiring.kirat.pk
    assert rows["c"]["candidates"][0]["status"] == "archived"
    assert rows["d"]["status"] == "batch_duplicate" and rows["d"]["duplicate_of"] == "a"
    assert prepared["needs_decision"] == ["b", "c", "d"]


def test_commit_applies_each_decision(hiring):
    prepared = prepare(
        hiring.people,
        [
            {"key": "a", "title": "Rohan Mehta", "data": {"source": "referral"}},
            {"key": "b", "title": "Kriat", "data": {}},
            {"key": "c", "title": "Abhishek", "data": {}},
            {"key": "d", "title": "Rohan Mehta", "data": {}},
        ],
        links=[
            {"source": {"row": "b"}, "relationship_type": "applied_to", "target": {"row": "a"}},
            {"source": {"row": "d"}, "relationship_type": "knows", "target": {"row": "c"}},
        ],
    )
    committed = ok(
        "commit_import",
        {
            "action_id": prepared["action_id"],
            "decisions": {
                "b": {"decision": "use_existing", "record_id": hiring.kirat.pk},
                "c": {
                    "decision": "create_anyway",
                    "clarification": "User: a second Abhishek, in Pune",
                },
                "d": {"decision": "skip"},
            },
        },
    )
    result = committed["result"]
    assert result["rows"]["a"]["outcome"] == "created"
    used = result["rows"]["b"]
    assert (used["outcome"], used["record_id"]) == ("used_existing", hiring.kirat.pk)
    assert used["resolution_id"], "a used record is reviewed for the next write too"
    assert result["rows"]["d"] == {"outcome": "skipped"}
    assert Record.objects.filter(title="Abhishek").count() == 2
    assert Record.objects.filter(title="Rohan Mehta").count() == 1
    # b's link attaches to the existing Kirat; d's link is dropped with its row.
    assert Relationship.objects.filter(
        source=hiring.kirat,
        relationship_type="applied_to",
        target_id=result["rows"]["a"]["record_id"],
    ).exists()
    assert len(result["dropped_links"]) == 1 and result["dropped_links"][0]["link_index"] == 1
    created = AuditEvent.objects.filter(action_id=prepared["action_id"], kind="record.created")
    assert created.count() == 2
    assert list(created.order_by("item_index").values_list("item_index", flat=True)) == [0, 2]


def test_decisions_must_cover_exactly_the_flagged_rows(hiring):
    prepared = prepare(
        hiring.people, [{"key": "b", "title": "Kriat"}, {"key": "z", "title": "Zed"}]
    )
    before = store_snapshot()
    refused("commit_import", {"action_id": prepared["action_id"]}, "INVALID_INPUT")
    refused(
        "commit_import",
        {
            "action_id": prepared["action_id"],
            "decisions": {"b": {"decision": "skip"}, "z": {"decision": "skip"}},
        },
        "INVALID_INPUT",
    )
    refused(
        "commit_import",
        {
            "action_id": prepared["action_id"],
            "decisions": {"b": {"decision": "use_existing", "record_id": hiring.abhishek.pk}},
        },
        "INVALID_INPUT",
    )
    refused(
        "commit_import",
        {"action_id": prepared["action_id"], "decisions": {"b": {"decision": "create_anyway"}}},
        "NEEDS_CLARIFICATION",
    )
    assert store_snapshot() == before
    ok(
        "commit_import",
        {"action_id": prepared["action_id"], "decisions": {"b": {"decision": "skip"}}},
    )


def test_rows_resembling_each_other_need_no_clarification_once_one_is_skipped(hiring):
    prepared = prepare(
        hiring.people, [{"key": "a", "title": "Kriat"}, {"key": "b", "title": "Kriat S"}]
    )
    rows = by_key(prepared)
    assert rows["a"]["status"] == "possible_duplicate"
    committed = ok(
        "commit_import",
        {
            "action_id": prepared["action_id"],
            "decisions": {
                "a": {"decision": "skip"},
                **({"b": {"decision": "create_anyway"}} if rows["b"]["status"] != "clean" else {}),
            },
        },
    )
    assert committed["status"] == "committed"


def test_import_goes_stale_when_a_name_in_the_collection_changes(hiring, ctx):
    prepared = prepare(hiring.people, [{"key": "a", "title": "Rohan Mehta"}])
    services.record_rename(
        ctx=ctx, record_id=hiring.abhishek.pk, title="Rohan Mehta", expected_version=1
    )
    before = store_snapshot()
    refused("commit_import", {"action_id": prepared["action_id"]}, "STALE_REVIEW")
    assert store_snapshot() == before


def test_data_change_elsewhere_keeps_the_import_fresh(hiring, ctx):
    prepared = prepare(hiring.people, [{"key": "a", "title": "Rohan Mehta"}])
    services.record_update(ctx=ctx, record_id=hiring.kirat.pk, changes={"x": 1}, expected_version=1)
    assert ok("commit_import", {"action_id": prepared["action_id"]})["status"] == "committed"


def test_replay_returns_the_original_result(hiring):
    prepared = prepare(hiring.people, [{"key": "a", "title": "Rohan Mehta"}])
    first = ok("commit_import", {"action_id": prepared["action_id"]})
    again = ok("commit_import", {"action_id": prepared["action_id"]})

    def stored(result):  # each reply issues its own reviews; the rest is the stored result
        rows = {
            k: {f: v for f, v in r.items() if f != "resolution_id"}
            for k, r in result["rows"].items()
        }
        return {**result, "rows": rows}

    assert again["replayed"] is True and stored(again["result"]) == stored(first["result"])
    assert again["result"]["rows"]["a"]["resolution_id"]
    assert Record.objects.filter(title="Rohan Mehta").count() == 1


def test_links_to_existing_records_need_a_resolution(hiring):
    rows = [{"key": "a", "title": "Rohan Mehta"}]
    links = [
        {
            "source": {"row": "a"},
            "relationship_type": "applied_to",
            "target": {"record_id": hiring.backend.pk},
        }
    ]
    refused(
        "prepare_import",
        {"collection_id": hiring.people.pk, "rows": rows, "links": links, "decision_reason": "r"},
        "REVIEW_REQUIRED",
    )
    opening = ok("resolve_record", {"query": "Junior Backend", "collection_id": hiring.openings.pk})
    prepared = prepare(hiring.people, rows, links=links, review_ids=[opening["resolution_id"]])
    result = ok("commit_import", {"action_id": prepared["action_id"]})["result"]
    assert Relationship.objects.filter(
        source_id=result["rows"]["a"]["record_id"], target=hiring.backend
    ).exists()


@pytest.mark.parametrize(
    ("rows", "field"),
    [
        ([{"key": "a", "title": ""}], "rows[0].title"),
        ([{"key": "a", "title": "A"}, {"key": "a", "title": "B"}], "rows[1].key"),
        ([{"key": "a", "title": "A", "data": [1]}], "rows[0].data"),
        ([{"key": "a", "title": "A", "colour": "red"}], "rows[0]"),
    ],
)
def test_bad_rows_are_refused_naming_the_field(hiring, rows, field):
    before = store_snapshot()
    error = refused(
        "prepare_import",
        {"collection_id": hiring.people.pk, "rows": rows, "decision_reason": "r"},
        "INVALID_INPUT",
    )
    assert field in error["message"]
    assert store_snapshot() == before


@pytest.mark.parametrize("count", [0, 101])
def test_row_count_is_bounded_by_the_schema(hiring, count):
    from tests.mcp_client import call_tool_raw

    rows = [{"key": str(i), "title": f"T{i}"} for i in range(count)]
    result = call_tool_raw(
        "prepare_import", {"collection_id": hiring.people.pk, "rows": rows, "decision_reason": "r"}
    )
    assert result.isError and result.structuredContent["error"]["details"]["field"] == "rows"


def test_row_count_is_bounded_by_the_workflow_too(hiring):
    from workflow.actions import prepare_import
    from workflow.scope import Scope

    with pytest.raises(AnchorError, match="rows: must be a list of 1-100"):
        prepare_import(
            Scope("local", "local-agent"),
            collection_id=hiring.people.pk,
            rows=[{"title": f"T{i}"} for i in range(101)],
            decision_reason="r",
        )


def test_comparison_cap_states_how_many_rows_fit(hiring, monkeypatch):
    monkeypatch.setattr(imports, "MAX_COMPARISONS", 20)
    error = refused(
        "prepare_import",
        {
            "collection_id": hiring.people.pk,
            "decision_reason": "r",
            "rows": [{"key": str(i), "title": f"New person {i}"} for i in range(10)],
        },
        "INVALID_INPUT",
    )
    assert error["details"]["rows_that_fit"] == 20 // 4
    assert "at most 5 rows" in error["message"]


def test_committed_rows_carry_a_resolution_a_link_can_cite_at_once(hiring):
    prepared = prepare(
        hiring.people, [{"key": "a", "title": "Rohan Mehta"}, {"key": "b", "title": "Priya Raman"}]
    )
    committed = ok("commit_import", {"action_id": prepared["action_id"]})
    rows = committed["result"]["rows"]
    assert "resolution_id" in committed["next_step"]
    linked = ok(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": rows["a"]["record_id"],
                "relationship_type": "knows",
                "target_id": rows["b"]["record_id"],
            },
            "review_ids": [rows["a"]["resolution_id"], rows["b"]["resolution_id"]],
            "decision_reason": "they work together",
        },
    )
    done = ok("commit_write", {"action_id": linked["action_id"]})
    assert done["status"] == "committed"
    assert Relationship.objects.filter(
        source_id=rows["a"]["record_id"], target_id=rows["b"]["record_id"]
    ).exists()
