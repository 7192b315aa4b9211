"""Write-side checks: the review each write needs, refusals that say the real reason, history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from records import services
from records.models import AuditEvent, Collection
from tests.conftest import link, make_collection, make_record
from tests.workflow.helpers import ok, refused, write
from workflow.imports import MAX_COMPARISONS
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def discover(name: str, purpose: str = "Whatever it is for") -> str:
    return ok("discover_collections", {"name": name, "purpose": purpose})["discovery_id"]


def resolve(query: str, **kwargs: Any) -> dict[str, Any]:
    return ok("resolve_record", {"query": query, **kwargs})


def prepare_args(operation: str, arguments: dict[str, Any], review_ids: list[str], **extra: Any):
    return {
        "operation": operation,
        "arguments": arguments,
        "review_ids": review_ids,
        "decision_reason": "the user asked",
        **extra,
    }


def fields_of(collection: Collection, **changes: Any) -> dict[str, Any]:
    return {
        "name": collection.name,
        "purpose": collection.purpose,
        "record_meaning": collection.record_meaning,
        "typical_fields": collection.typical_fields,
        "relationship_guidance": collection.relationship_guidance,
        **changes,
    }


# --- collections -----------------------------------------------------------------------------


def test_reusing_a_collection_by_its_exact_name_is_audited_with_its_reason(hiring):
    people = hiring.people
    result = write(
        "create_collection",
        fields_of(people),
        [discover(people.name, people.purpose)],
        reason="The user wants to keep people here",
    )
    assert result["result"]["created"] is False
    event = AuditEvent.objects.get(kind="collection.reused")
    assert event.collection_id == people.pk
    assert event.decision_reason == "The user wants to keep people here"
    history = ok("get_collection_history", {"collection_id": people.pk})
    assert history["events"][0]["kind"] == "collection.reused"


@pytest.mark.parametrize("operation", ["add_collection_alias", "remove_collection_alias"])
def test_a_collection_alias_needs_a_discovery_of_the_alias(hiring, ctx, operation):
    if operation == "remove_collection_alias":
        services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="folks")
    arguments = {"collection_id": hiring.people.pk, "alias": "folks"}
    said = {"clarification": "The user said to call people folks."}
    of_collection = discover(hiring.people.name, hiring.people.purpose)  # lists the collection
    error = refused(
        "prepare_write",
        prepare_args(operation, arguments, [of_collection], **said),
        "REVIEW_REQUIRED",
    )
    assert "discover_collections(name='folks'" in error["message"]
    result = write(operation, arguments, [discover("folks")], **said)
    assert result["status"] == "committed"


def test_update_collection_needs_a_discovery_of_the_new_name_and_purpose(hiring):
    openings = hiring.openings
    renamed = fields_of(openings, name="vacancies", purpose="Roles open for candidates now")
    arguments = {"collection_id": openings.pk, **renamed}
    unrelated = discover("garden plants", "Plants in the garden")
    refused(
        "prepare_write",
        prepare_args("update_collection", arguments, [unrelated]),
        "REVIEW_REQUIRED",
    )
    name_only = discover("vacancies", "something else entirely")
    refused(
        "prepare_write",
        prepare_args("update_collection", arguments, [name_only]),
        "REVIEW_REQUIRED",
    )
    fitting = discover("vacancies", "Roles open for candidates now")
    assert write("update_collection", arguments, [fitting])["status"] == "committed"


def test_a_new_purpose_resembling_another_collection_needs_clarification(hiring):
    openings = hiring.openings
    changed = fields_of(openings, purpose="Interviews held for an application")
    arguments = {"collection_id": openings.pk, **changed}
    review = discover(openings.name, changed["purpose"])
    error = refused(
        "prepare_write",
        prepare_args("update_collection", arguments, [review]),
        "NEEDS_CLARIFICATION",
    )
    assert "'interviews'" in error["message"]


# --- records ---------------------------------------------------------------------------------


def test_changing_an_archived_record_is_refused_as_archived_at_once(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.kirat.pk, expected_version=1)
    review = resolve("Kirat", collection_id=hiring.people.pk)
    assert review["status"] == "needs_clarification"  # the exact match is archived
    update = {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 2}
    refused(
        "prepare_write",
        prepare_args("update_record", update, [review["resolution_id"]]),
        "ARCHIVED",
    )
    abhishek = resolve("Abhishek", collection_id=hiring.people.pk)
    link = {
        "source_id": hiring.abhishek.pk,
        "relationship_type": "knows",
        "target_id": hiring.kirat.pk,
    }
    ids = [review["resolution_id"], abhishek["resolution_id"]]
    refused("prepare_write", prepare_args("link_records", link, ids), "ARCHIVED")


def test_removing_a_link_to_an_archived_record_still_only_needs_the_users_word(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.kirat.pk, expected_version=1)
    rel = hiring.kirat_backend.outgoing.get(target=hiring.kirat)
    ids = [
        resolve("Kirat", collection_id=hiring.people.pk)["resolution_id"],
        resolve(hiring.kirat_backend.pk)["resolution_id"],
    ]
    args = prepare_args("unlink_records", {"relationship_id": rel.pk}, ids)
    refused("prepare_write", args, "NEEDS_CLARIFICATION")


def test_a_link_of_another_workspace_or_gone_is_not_found_naming_the_argument(hiring, other_ctx):
    theirs = make_collection(other_ctx, "people")
    a, b = make_record(other_ctx, theirs, "Kirat"), make_record(other_ctx, theirs, "Asha")
    their_link = link(other_ctx, a, "knows", b)
    ids = [resolve("Kirat", collection_id=hiring.people.pk)["resolution_id"]]
    for relationship_id in (their_link.pk, "00000000-0000-4000-8000-000000000000"):
        args = prepare_args("unlink_records", {"relationship_id": relationship_id}, ids)
        error = refused("prepare_write", args, "NOT_FOUND")
        assert error["details"]["field"] == "relationship_id"
        assert error["message"].startswith(
            f"relationship_id: no relationship with ID {relationship_id!r}"
        )
        assert "get_record_context's links (a removed link is gone" in error["message"]


def test_a_merged_record_too_big_names_the_merged_size(hiring, ctx):
    record = make_record(ctx, hiring.people, "Big Data Person", notes="x" * 9000)
    review = resolve("Big Data Person", collection_id=hiring.people.pk)
    update = {"record_id": record.pk, "changes": {"more": "y" * 9000}, "expected_version": 1}
    error = refused(
        "prepare_write",
        prepare_args("update_record", update, [review["resolution_id"]]),
        "INVALID_INPUT",
    )
    assert "merged into the record's current data" in error["message"]
    details = error["details"]
    assert details["merged_size"] > details["limit"] > 9000 > details["current_size"] - 100


def test_another_actors_review_and_action_are_named_as_such(hiring, settings):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    update = {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1}
    action = ok("prepare_write", prepare_args("update_record", update, [review["resolution_id"]]))
    settings.ANCHOR_ACTOR_ID = "someone-else"
    error = refused(
        "prepare_write",
        prepare_args("update_record", update, [review["resolution_id"]]),
        "NOT_FOUND",
    )
    assert "belongs to another actor" in error["message"]
    error = refused("commit_write", {"action_id": action["action_id"]}, "NOT_FOUND")
    assert "belongs to another actor" in error["message"]
    settings.ANCHOR_WORKSPACE_ID = "elsewhere"
    error = refused("commit_write", {"action_id": action["action_id"]}, "NOT_FOUND")
    assert "belongs to another actor" not in error["message"]


def test_a_commit_that_changes_nothing_leaves_a_history_entry(hiring):
    ids = [
        resolve(hiring.kirat_backend.pk)["resolution_id"],
        resolve("Kirat", collection_id=hiring.people.pk)["resolution_id"],
    ]
    link = {
        "source_id": hiring.kirat_backend.pk,
        "relationship_type": "applicant",
        "target_id": hiring.kirat.pk,
    }
    result = write("link_records", link, ids, reason="The user confirmed the applicant")
    assert result["result"]["created"] is False
    history = ok("get_record_history", {"record_id": hiring.kirat_backend.pk})
    latest = history["events"][0]
    assert latest["kind"] == "relationship.already_linked"
    assert latest["decision_reason"] == "The user confirmed the applicant"


def test_the_three_character_rule_applies_to_stored_names_too(hiring, ctx):
    al = make_record(ctx, hiring.people, "Al")
    found = resolve("Alx", collection_id=hiring.people.pk)
    assert al.pk not in [c["record_id"] for c in found.get("candidates", [])]
    assert resolve("Al", collection_id=hiring.people.pk)["selected_record_id"] == al.pk
    rows = [{"key": "a", "title": "Al", "data": {}}, {"key": "b", "title": "Alx", "data": {}}]
    reviewed = ok(
        "prepare_import",
        {"collection_id": hiring.openings.pk, "rows": rows, "decision_reason": "the user asked"},
    )
    assert reviewed["needs_decision"] == []


# --- reads -----------------------------------------------------------------------------------


def test_traverse_writes_archived_at_with_the_utc_offset(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.kirat.pk, expected_version=1)
    walked = ok("traverse", {"start_record_id": hiring.kirat_backend.pk})
    kirat = next(r for r in walked["records"] if r["record_id"] == hiring.kirat.pk)
    assert kirat["archived_at"].endswith("+00:00")


def test_aggregate_groups_true_and_1_apart_and_reports_false_as_false(hiring, ctx):
    for index, flag in enumerate([True, 1, False, 0, True]):
        make_record(ctx, hiring.feedback, f"entry {index}", flag=flag)
    result = ok("aggregate", {"collection_id": hiring.feedback.pk, "group_by": {"field": ["flag"]}})
    keys = sorted((type(g["key"]).__name__, g["key"], g["count"]) for g in result["groups"])
    assert keys == [("bool", False, 1), ("bool", True, 2), ("int", 0, 1), ("int", 1, 1)]


# --- the import cap, as documented -------------------------------------------------------------


def test_the_import_comparison_cap_is_documented_as_it_is(settings):
    # The tool list leaves it out (a refusal names rows_that_fit); the usage guide says it.
    readme = (Path(settings.BASE_DIR) / "docs" / "agent-usage.md").read_text()
    assert f"{MAX_COMPARISONS:,} length-weighted comparisons" in readme
