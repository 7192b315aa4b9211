"""prepare_write / commit_write: evidence rules, freshness, atomicity, replay, error codes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from records import services
from records.models import AuditEvent, Record, Relationship
from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok, refused, store_snapshot, write
from workflow.models import PreparedAction, ReviewTicket
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def resolve(query, **kwargs):
    return ok("resolve_record", {"query": query, **kwargs})


def prepare(operation, arguments, review_ids, **extra):
    return ok(
        "prepare_write",
        {
            "operation": operation,
            "arguments": arguments,
            "review_ids": review_ids,
            "decision_reason": "the user asked",
            **extra,
        },
    )


def test_update_after_resolution_commits_and_audits_the_evidence(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    before = store_snapshot()
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"city": "Pune"}, "expected_version": 1},
        [review["resolution_id"]],
    )
    assert prepared["preview"]["record"]["data"]["city"] == "Pune"
    assert store_snapshot() == before, "prepare must leave nothing behind"
    committed = ok("commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed"
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.data["city"] == "Pune" and kirat.version == 2
    event = AuditEvent.objects.filter(record_id=kirat.pk, kind="record.updated").get()
    assert event.action_id == prepared["action_id"]
    assert event.review_evidence[0]["review_id"] == review["resolution_id"]
    assert event.decision_reason == "the user asked"


def test_replay_returns_the_stored_result_without_a_second_write(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"n": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    first = ok("commit_write", {"action_id": prepared["action_id"]})
    events = AuditEvent.objects.count()
    # The reply was lost; the agent retries the same action, even after it expired.
    PreparedAction.objects.filter(pk=prepared["action_id"]).update(
        expires_at=timezone.now() - timedelta(hours=1)
    )
    again = ok("commit_write", {"action_id": prepared["action_id"]})
    assert again["replayed"] is True
    assert again["result"] == first["result"]
    assert AuditEvent.objects.count() == events
    assert Record.objects.get(pk=hiring.kirat.pk).version == 2


def test_create_record_requires_a_whole_collection_title_resolution(hiring):
    narrowed = resolve(
        "Priya", collection_id=hiring.people.pk, context_record_ids=[hiring.kirat_backend.pk]
    )
    before = store_snapshot()
    error = refused(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Priya", "data": {}},
            "review_ids": [narrowed["resolution_id"]],
            "decision_reason": "new interviewer",
        },
        "REVIEW_REQUIRED",
    )
    assert "resolve_record" in error["message"]
    assert store_snapshot() == before


def test_typo_collection_is_not_created_and_expenses_is_suggested(ctx):
    make_collection(ctx, "Expenses", "Track money spent")
    discovery = ok("discover_collections", {"name": "expneses", "purpose": "Track money spent"})
    assert discovery["suggestions"][0]["name"] == "Expenses"
    before = store_snapshot()
    refused(
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": {
                "name": "expneses",
                "purpose": "Track money spent",
                "record_meaning": "One expense",
                "typical_fields": ["amount"],
                "relationship_guidance": "",
            },
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": "user asked",
        },
        "NEEDS_CLARIFICATION",
    )
    assert store_snapshot() == before


def test_new_collection_after_discovery(ctx):
    discovery = ok("discover_collections", {"name": "expenses", "purpose": "Track money spent"})
    assert discovery["status"] == "complete" and discovery["catalog"] == []
    result = write(
        "create_collection",
        {
            "name": "expenses",
            "purpose": "Track money spent",
            "record_meaning": "One expense",
            "typical_fields": ["amount", "category", "date"],
            "relationship_guidance": "May link to a project or person",
        },
        [discovery["discovery_id"]],
    )
    assert "created" not in result["result"], "made anew, as expected: said only when not"
    # The exact name again returns the existing collection unchanged.
    again = ok("discover_collections", {"name": "Expenses", "purpose": "Other words"})
    reused = write(
        "create_collection",
        {
            "name": "Expenses",
            "purpose": "Other words",
            "record_meaning": "x",
            "typical_fields": ["a"],
            "relationship_guidance": "",
        },
        [again["discovery_id"]],
    )
    assert reused["result"]["created"] is False
    assert reused["result"]["collection"]["purpose"] == "Track money spent"


def test_discovery_must_match_the_proposed_name(ctx):
    discovery = ok("discover_collections", {"name": "expenses", "purpose": "Track money spent"})
    refused(
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": {
                "name": "spending",
                "purpose": "Track money spent",
                "record_meaning": "One expense",
                "typical_fields": ["amount"],
                "relationship_guidance": "",
            },
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": "user asked",
        },
        "REVIEW_REQUIRED",
    )


def test_another_kirat_only_with_a_clarification(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    args = {"collection_id": hiring.people.pk, "title": "Kirat", "data": {"team": "sales"}}
    refused(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": args,
            "review_ids": [review["resolution_id"]],
            "decision_reason": "new person",
        },
        "NEEDS_CLARIFICATION",
    )
    result = write(
        "create_record",
        args,
        [review["resolution_id"]],
        clarification="User: this is a different Kirat, from the sales team",
    )
    created = Record.objects.get(pk=result["result"]["record"]["record_id"])
    assert created.pk != hiring.kirat.pk
    event = AuditEvent.objects.get(record_id=created.pk, kind="record.created")
    assert event.agent_reported_clarification.startswith("User: this is a different Kirat")


def test_fuzzy_candidate_cannot_be_written_without_clarification(hiring):
    review = resolve("Kriat", collection_id=hiring.people.pk)
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "typo",
        },
        "NEEDS_CLARIFICATION",
    )


def test_unreviewed_record_is_refused(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.abhishek.pk,
                "changes": {"x": 1},
                "expected_version": 1,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "REVIEW_REQUIRED",
    )


def test_namesake_in_searched_collection_makes_the_review_stale(hiring, ctx):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    make_record(ctx, hiring.people, "Kirat")  # a namesake appears
    before = store_snapshot()
    refused("commit_write", {"action_id": prepared["action_id"]}, "STALE_REVIEW")
    assert store_snapshot() == before
    assert PreparedAction.objects.get(pk=prepared["action_id"]).state == "stale"
    # and stays refused
    refused("commit_write", {"action_id": prepared["action_id"]}, "STALE_REVIEW")


def test_write_in_another_collection_keeps_the_review_fresh(hiring, ctx):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    make_record(ctx, hiring.openings, "Staff Engineer")
    services.record_update(
        ctx=ctx, record_id=hiring.rahul_backend.pk, changes={"a": 1}, expected_version=1
    )
    result = write(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    assert result["status"] == "committed"


def test_resolution_by_id_depends_only_on_that_records_collection(hiring, ctx):
    review = resolve(hiring.kirat.pk)  # workspace-wide, by ID
    ticket = ReviewTicket.objects.get(pk=review["resolution_id"])
    assert f"names:{hiring.people.pk}" in ticket.counters and "names:*" not in ticket.counters
    make_record(ctx, hiring.openings, "Staff Engineer")  # a creation elsewhere
    result = write(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    assert result["status"] == "committed"
    review = resolve(hiring.kirat.pk)
    # A namesake moves the counter, but a lookup by ID answers the same: still valid.
    make_record(ctx, hiring.people, "Kirat")
    action = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 2}, "expected_version": 2},
        [review["resolution_id"]],
    )
    assert action["action_id"]
    # Renaming the record itself changes the answer.
    services.record_rename(ctx=ctx, record_id=hiring.kirat.pk, title="Kirat S", expected_version=2)
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": hiring.kirat.pk, "changes": {"x": 2}, "expected_version": 3},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "STALE_REVIEW",
    )


def test_expired_review_is_stale(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    ReviewTicket.objects.filter(pk=review["resolution_id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "STALE_REVIEW",
    )


def test_expired_action_is_stale(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    PreparedAction.objects.filter(pk=prepared["action_id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    refused("commit_write", {"action_id": prepared["action_id"]}, "STALE_REVIEW")
    assert Record.objects.get(pk=hiring.kirat.pk).version == 1


def test_other_actor_and_workspace_tickets_and_actions_are_not_found(hiring, settings):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    args = {
        "operation": "update_record",
        "arguments": {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        "review_ids": [review["resolution_id"]],
        "decision_reason": "r",
    }
    settings.ANCHOR_ACTOR_ID = "someone-else"
    refused("prepare_write", args, "NOT_FOUND")
    refused("commit_write", {"action_id": prepared["action_id"]}, "NOT_FOUND")
    settings.ANCHOR_ACTOR_ID = "local-agent"
    settings.ANCHOR_WORKSPACE_ID = "elsewhere"
    refused("commit_write", {"action_id": prepared["action_id"]}, "NOT_FOUND")
    refused("prepare_write", args, "NOT_FOUND")
    settings.ANCHOR_WORKSPACE_ID = "local"
    assert Record.objects.get(pk=hiring.kirat.pk).version == 1


def test_version_conflict_at_commit(hiring, ctx):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    services.record_update(ctx=ctx, record_id=hiring.kirat.pk, changes={"y": 2}, expected_version=1)
    error = refused("commit_write", {"action_id": prepared["action_id"]}, "VERSION_CONFLICT")
    assert error["details"]["current_version"] == 2
    assert Record.objects.get(pk=hiring.kirat.pk).data.get("x") is None


def test_archived_record_refuses_data_changes(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    review = resolve(hiring.abhishek.pk)
    refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.abhishek.pk,
                "changes": {"x": 1},
                "expected_version": 2,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
            "clarification": "user confirmed the archived Abhishek",
        },
        "ARCHIVED",
    )


def test_incomplete_review_cannot_authorize(ctx):
    crowd = make_collection(ctx, "crowd")
    for index in range(25):
        make_record(ctx, crowd, f"Sam {index}")
    review = resolve("Sam", collection_id=crowd.pk)
    refused(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": crowd.pk, "title": "Sam", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
            "clarification": "different Sam",
        },
        "INCOMPLETE_REVIEW",
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"record_id": "x", "changes": {}, "expected_version": 1}, "record_id"),
        ({"record_id": "x", "changes": {}}, "arguments"),
        ({"record_id": "x", "changes": {}, "expected_version": 1, "extra": 1}, "arguments"),
    ],
)
def test_malformed_arguments_name_the_field(hiring, arguments, field):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    before = store_snapshot()
    error = refused(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": arguments,
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "INVALID_INPUT",
    )
    assert field in error["message"]
    assert store_snapshot() == before


def test_unknown_operation_and_missing_reason(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    refused(
        "prepare_write",
        {
            "operation": "delete_everything",
            "arguments": {},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "INVALID_INPUT",
    )
    error = refused(
        "prepare_write",
        {
            "operation": "archive_record",
            "arguments": {"record_id": hiring.kirat.pk, "expected_version": 1},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "  ",
        },
        "INVALID_INPUT",
    )
    assert "decision_reason" in error["message"]
    refused(
        "prepare_write",
        {
            "operation": "archive_record",
            "arguments": {"record_id": hiring.kirat.pk, "expected_version": 1},
            "review_ids": [],
            "decision_reason": "r",
        },
        "INVALID_INPUT",
    )


def test_oversized_data_is_refused(hiring):
    review = resolve("Big", collection_id=hiring.people.pk)
    error = refused(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {
                "collection_id": hiring.people.pk,
                "title": "Big",
                "data": {"blob": "x" * 17000},
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
        "INVALID_INPUT",
    )
    assert "data" in error["message"] and "16384" in error["message"]


def test_link_and_unlink_need_both_ends_reviewed(hiring):
    # Scoped to its collection, so creating feedback elsewhere leaves this review fresh.
    interview = resolve("Kirat backend coding interview", collection_id=hiring.interviews.pk)
    feedback_title = resolve("Priya feedback", collection_id=hiring.feedback.pk)
    created = write(
        "create_record",
        {
            "collection_id": hiring.feedback.pk,
            "title": "Priya feedback",
            "data": {"author": "Priya", "verdict": "strong"},
        },
        [feedback_title["resolution_id"]],
    )
    feedback_id = created["result"]["record"]["record_id"]
    feedback = resolve(feedback_id)
    refused(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": feedback_id,
                "relationship_type": "about",
                "target_id": hiring.coding_interview.pk,
            },
            "review_ids": [feedback["resolution_id"]],
            "decision_reason": "r",
        },
        "REVIEW_REQUIRED",
    )
    linked = write(
        "link_records",
        {
            "source_id": feedback_id,
            "relationship_type": "about",
            "target_id": hiring.coding_interview.pk,
        },
        [feedback["resolution_id"], interview["resolution_id"]],
    )
    rel_id = linked["result"]["relationship"]["relationship_id"]
    assert Relationship.objects.filter(pk=rel_id).exists()
    # Correction: remove the link (links changed, so review both ends again).
    feedback = resolve(feedback_id)
    interview = resolve("Kirat backend coding interview")
    write(
        "unlink_records",
        {"relationship_id": rel_id},
        [feedback["resolution_id"], interview["resolution_id"]],
    )
    assert not Relationship.objects.filter(pk=rel_id).exists()
    assert AuditEvent.objects.filter(record_id=feedback_id, kind="relationship.deleted").exists()


def test_alias_and_self_mapping_need_the_users_word(hiring):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    for operation, arguments in [
        ("add_record_alias", {"record_id": hiring.kirat.pk, "alias": "KS", "expected_version": 1}),
        ("set_self", {"record_id": hiring.kirat.pk, "expected_version": 1}),
    ]:
        refused(
            "prepare_write",
            {
                "operation": operation,
                "arguments": arguments,
                "review_ids": [review["resolution_id"]],
                "decision_reason": "r",
            },
            "NEEDS_CLARIFICATION",
        )
    write(
        "set_self",
        {"record_id": hiring.kirat.pk, "expected_version": 1},
        [review["resolution_id"]],
        clarification="User said: I am Kirat",
    )
    assert ok("resolve_record", {"query": "me"})["selected_record_id"] == hiring.kirat.pk


def test_rename_checks_the_new_title_for_namesakes(hiring):
    review = resolve("Abhishek", collection_id=hiring.people.pk)
    new_title = resolve("Kirat", collection_id=hiring.people.pk)
    refused(
        "prepare_write",
        {
            "operation": "rename_record",
            "arguments": {"record_id": hiring.abhishek.pk, "title": "Kirat", "expected_version": 1},
            "review_ids": [review["resolution_id"], new_title["resolution_id"]],
            "decision_reason": "r",
        },
        "NEEDS_CLARIFICATION",
    )
    fresh = resolve("Abhishek Rao", collection_id=hiring.people.pk)
    result = write(
        "rename_record",
        {"record_id": hiring.abhishek.pk, "title": "Abhishek Rao", "expected_version": 1},
        [review["resolution_id"], fresh["resolution_id"]],
    )
    assert result["result"]["record"]["version"] == 2
    hiring.abhishek.refresh_from_db()
    assert hiring.abhishek.title == "Abhishek Rao"


def test_legacy_write_tools_refuse_and_write_nothing(hiring):
    before = store_snapshot()
    for tool in [
        "create_collection",
        "create_record",
        "update_record",
        "archive_record",
        "link_records",
        "unlink_records",
    ]:
        error = refused(tool, {}, "REVIEW_REQUIRED")
        assert "prepare_write" in error["message"]
    assert store_snapshot() == before


def test_storage_error_is_reported_without_a_traceback(hiring, monkeypatch):
    from django.db import OperationalError

    from workflow import resolution

    def broken(*args, **kwargs):
        raise OperationalError("disk I/O error")

    monkeypatch.setattr(resolution, "scope_names", broken)
    error = refused("resolve_record", {"query": "Kirat"}, "STORAGE_ERROR")
    assert "Traceback" not in error["message"]


def test_approval_queue_holds_the_write_until_a_person_decides(hiring, ctx):
    from workflow.actions import approve_prepared_action, reject_prepared_action

    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    review = resolve("Kirat", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    assert prepared["requires_human_approval"] is True
    waiting = ok("commit_write", {"action_id": prepared["action_id"]})
    assert waiting["status"] == "awaiting_approval"
    assert Record.objects.get(pk=hiring.kirat.pk).version == 1
    approved = approve_prepared_action(action_id=prepared["action_id"], reviewer="user:ana")
    assert approved["status"] == "committed"
    assert Record.objects.get(pk=hiring.kirat.pk).version == 2
    replay = ok("commit_write", {"action_id": prepared["action_id"]})
    assert replay["status"] == "committed" and replay["replayed"] is True

    review = resolve("Abhishek", collection_id=hiring.people.pk)
    prepared = prepare(
        "update_record",
        {"record_id": hiring.abhishek.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    ok("commit_write", {"action_id": prepared["action_id"]})
    reject_prepared_action(
        action_id=prepared["action_id"], reviewer="user:ana", reason="Not this person"
    )
    rejected = ok("commit_write", {"action_id": prepared["action_id"]})
    assert rejected["status"] == "rejected" and rejected["reason"] == "Not this person"
    assert Record.objects.get(pk=hiring.abhishek.pk).version == 1


def test_one_shared_purpose_word_is_not_an_overlap_two_are(ctx):
    """ "team" alone says nothing about two purposes; "money" and "spent" together do."""
    make_collection(ctx, "projects", "Work our team runs for clients")
    make_collection(ctx, "Expenses", "Track money spent")
    people = ok("discover_collections", {"name": "people", "purpose": "Everyone on the team"})
    assert people["suggestions"] == []
    costs = ok("discover_collections", {"name": "costs", "purpose": "Money spent on travel"})
    assert [s["name"] for s in costs["suggestions"]] == ["Expenses"]
    assert "purpose shares the word(s) ['money', 'spent']" in costs["suggestions"][0]["reasons"]
