"""A review goes stale when its answer changed, and only then (counters are the fast path)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from records import services
from records.errors import AnchorError
from records.models import Record
from tests.conftest import make_collection, make_record
from tests.mcp_client import call_tool
from tests.workflow.helpers import ok, refused
from workflow import freshness
from workflow.actions import approve_prepared_action
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def resolve(query: str, **kwargs: Any) -> dict[str, Any]:
    return ok("resolve_record", {"query": query, **kwargs})


def prepare(operation: str, arguments: dict[str, Any], review_ids: list[str], **extra: Any):
    return call_tool(
        "prepare_write",
        {
            "operation": operation,
            "arguments": arguments,
            "review_ids": review_ids,
            "decision_reason": "the user asked",
            **extra,
        },
    )


def prepared_create(collection_id: str, title: str) -> str:
    review = resolve(title, collection_id=collection_id)
    envelope = prepare(
        "create_record",
        {"collection_id": collection_id, "title": title, "data": {}},
        [review["resolution_id"]],
    )
    assert envelope["ok"], envelope
    return envelope["result"]["action_id"]


def as_actor(settings, actor: str) -> None:
    settings.ANCHOR_ACTOR_ID = actor


# --- resolutions ---------------------------------------------------------------------------


def test_two_actors_creating_dissimilar_names_in_one_collection_never_go_stale(hiring, settings):
    """Interleaved resolve / prepare / commit of two actors: every write lands."""
    names = {
        "agent-a": ["Alpha Mwangi", "Aurora Lindqvist", "Amara Osei", "Anouk Verhoeven"],
        "agent-b": ["Bravo Okafor", "Bjorn Halvorsen", "Beatriz Camacho", "Bogdan Petrescu"],
    }
    refusals: list[Any] = []
    for a_name, b_name in zip(names["agent-a"], names["agent-b"], strict=True):
        as_actor(settings, "agent-a")
        a_review = resolve(a_name, collection_id=hiring.people.pk)
        as_actor(settings, "agent-b")
        b_review = resolve(b_name, collection_id=hiring.people.pk)
        b_prepared = prepare(
            "create_record",
            {"collection_id": hiring.people.pk, "title": b_name, "data": {}},
            [b_review["resolution_id"]],
        )
        as_actor(settings, "agent-a")
        a_prepared = prepare(
            "create_record",
            {"collection_id": hiring.people.pk, "title": a_name, "data": {}},
            [a_review["resolution_id"]],
        )
        as_actor(settings, "agent-b")
        b_commit = call_tool("commit_write", {"action_id": b_prepared["result"]["action_id"]})
        as_actor(settings, "agent-a")  # A's review counter moved; its answer did not
        a_commit = call_tool("commit_write", {"action_id": a_prepared["result"]["action_id"]})
        refusals += [e["error"] for e in (a_commit, b_commit) if not e["ok"]]
    assert refusals == []
    titles = set(Record.objects.filter(collection=hiring.people).values_list("title", flat=True))
    assert titles >= set(names["agent-a"]) | set(names["agent-b"])


def test_a_similar_name_added_after_the_review_makes_it_stale_at_prepare(hiring, ctx):
    review = resolve("Charlie Brown", collection_id=hiring.people.pk)
    assert review["status"] == "no_match"
    browne = make_record(ctx, hiring.people, "Charlie Browne")
    envelope = prepare(
        "create_record",
        {"collection_id": hiring.people.pk, "title": "Charlie Brown", "data": {}},
        [review["resolution_id"]],
    )
    assert not envelope["ok"] and envelope["error"]["code"] == "STALE_REVIEW"
    error = envelope["error"]
    assert "'Charlie Browne'" in error["message"] and browne.pk in error["message"]
    assert error["details"]["new_candidates"] == [
        {"record_id": browne.pk, "title": "Charlie Browne"}
    ]


def test_a_similar_name_added_after_prepare_makes_the_commit_stale(hiring, ctx):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    browne = make_record(ctx, hiring.people, "Charlie Browne")
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    assert "'Charlie Browne'" in error["message"] and browne.pk in error["message"]
    assert not Record.objects.filter(title="Charlie Brown").exists()
    assert PreparedAction.objects.get(pk=action_id).state == ActionState.STALE


def test_a_dissimilar_name_added_after_prepare_keeps_the_commit_valid(hiring, ctx):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    make_record(ctx, hiring.people, "Delphine Arnaud")
    assert ok("commit_write", {"action_id": action_id})["status"] == "committed"


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda ctx, h: services.record_archive(
                ctx=ctx, record_id=h.kirat.pk, expected_version=1
            ),
            "is now archived",
        ),
        (
            lambda ctx, h: services.record_rename(
                ctx=ctx, record_id=h.kirat.pk, title="Zubin Mehta", expected_version=1
            ),
            "is no longer a candidate",
        ),
        (
            lambda ctx, h: services.record_alias_add(
                ctx=ctx, record_id=h.abhishek.pk, alias="Kirat", expected_version=1
            ),
            "new exact candidate 'Abhishek'",
        ),
    ],
    ids=["archived", "renamed away", "another exact match"],
)
def test_a_candidates_standing_changing_makes_the_review_stale(hiring, ctx, change, expected):
    review = resolve("Kirat", collection_id=hiring.people.pk)
    envelope = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    change(ctx, hiring)
    error = refused("commit_write", {"action_id": envelope["result"]["action_id"]}, "STALE_REVIEW")
    assert expected in error["message"], error["message"]


def test_a_link_removed_from_a_context_record_makes_the_review_stale(hiring, ctx):
    review = resolve("Kirat", context_record_ids=[hiring.kirat_backend.pk])
    assert review["selected_record_id"] == hiring.kirat.pk
    envelope = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    # Another link on the context record: the counter moves, the answer does not.
    services.relationship_create(
        ctx=ctx,
        source_id=hiring.kirat_backend.pk,
        relationship_type="referred_by",
        target_id=hiring.abhishek.pk,
    )
    freshness.check_fresh(list(ReviewTicket.objects.filter(pk=review["resolution_id"])))
    applicant = hiring.kirat_backend.outgoing.get(target=hiring.kirat)
    services.relationship_delete(ctx=ctx, relationship_id=applicant.pk)
    error = refused("commit_write", {"action_id": envelope["result"]["action_id"]}, "STALE_REVIEW")
    assert "is no longer a candidate" in error["message"]


def test_unmoved_counters_are_the_fast_path_and_moved_ones_re_evaluate(hiring, ctx, monkeypatch):
    calls: list[str] = []
    real = freshness.reevaluate

    def counting(ticket: ReviewTicket) -> freshness.Changes:
        calls.append(ticket.pk)
        return real(ticket)

    monkeypatch.setattr(freshness, "reevaluate", counting)
    first = prepared_create(hiring.people.pk, "Charlie Brown")
    assert ok("commit_write", {"action_id": first})["status"] == "committed"
    assert calls == [], "nothing moved: no re-evaluation"
    second = prepared_create(hiring.people.pk, "Delphine Arnaud")
    make_record(ctx, hiring.people, "Edmund Ferreira")
    assert ok("commit_write", {"action_id": second})["status"] == "committed"
    assert calls == [], "only an unrelated name was written: the names since decide it"
    third = prepared_create(hiring.people.pk, "Farida Haddad")
    make_record(ctx, hiring.people, "Farida Hadad")
    refused("commit_write", {"action_id": third}, "STALE_REVIEW")
    # Once before the write lock (to load the names), once under it (the one that decides).
    assert len(calls) == 2 and len(set(calls)) == 1


# --- discoveries ---------------------------------------------------------------------------


def collection_args(name: str, purpose: str) -> dict[str, Any]:
    return {
        "name": name,
        "purpose": purpose,
        "record_meaning": "one of them",
        "typical_fields": ["notes"],
        "relationship_guidance": "",
    }


def prepared_collection(name: str, purpose: str) -> str:
    discovery = ok("discover_collections", {"name": name, "purpose": purpose})
    envelope = prepare(
        "create_collection",
        collection_args(name, purpose),
        [discovery["discovery_id"]],
        clarification=(
            "The user said this is separate from the others." if discovery["suggestions"] else None
        ),
    )
    assert envelope["ok"], envelope
    return envelope["result"]["action_id"]


def test_an_unrelated_collection_created_keeps_a_discovery_valid(hiring, ctx):
    action_id = prepared_collection("garden plants", "Plants growing in the garden beds")
    make_collection(ctx, "vehicles", "Cars and bikes we maintain")
    assert ok("commit_write", {"action_id": action_id})["status"] == "committed"


def test_a_collection_that_would_now_be_suggested_makes_the_discovery_stale(hiring, ctx):
    action_id = prepared_collection("garden plants", "Plants growing in the garden beds")
    similar = make_collection(ctx, "garden plant", "Plants in the garden")
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    assert "would now be suggested" in error["message"] and similar.pk in error["message"]


def test_a_listed_collection_whose_purpose_changed_makes_the_discovery_stale(hiring, ctx):
    action_id = prepared_collection("garden plants", "Plants growing in the garden beds")
    services.collection_update(
        ctx=ctx,
        collection_id=hiring.openings.pk,
        fields=services.CollectionFields.validated(**collection_args("openings", "Seedlings")),
    )
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    assert "changed its name or purpose" in error["message"]
    assert hiring.openings.pk in error["message"]


# --- imports -------------------------------------------------------------------------------


def test_an_import_stays_valid_unless_a_rows_candidates_change(hiring, ctx):
    rows = [{"key": "a", "title": "Charlie Brown", "data": {}}]
    args = {"collection_id": hiring.people.pk, "rows": rows, "decision_reason": "the user asked"}
    first = ok("prepare_import", args)
    make_record(ctx, hiring.people, "Delphine Arnaud")
    assert ok("commit_import", {"action_id": first["action_id"]})["status"] == "committed"

    rows = [{"key": "a", "title": "Edmund Ferreira", "data": {}}]
    second = ok("prepare_import", {**args, "rows": rows})
    make_record(ctx, hiring.people, "Edmund Ferreiro")
    error = refused("commit_import", {"action_id": second["action_id"]}, "STALE_REVIEW")
    assert "'Edmund Ferreiro'" in error["message"]


# --- approvals and deadlines ---------------------------------------------------------------


def test_approving_three_independent_pending_creates_applies_all_three(hiring, ctx):
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    titles = ["Charlie Brown", "Delphine Arnaud", "Edmund Ferreira"]
    action_ids = [prepared_create(hiring.people.pk, title) for title in titles]
    for action_id in action_ids:
        assert ok("commit_write", {"action_id": action_id})["status"] == "awaiting_approval"
    for action_id in action_ids:
        approved = approve_prepared_action(action_id=action_id, reviewer="user:ana")
        assert approved["status"] == "committed"
    stored = set(Record.objects.filter(collection=hiring.people).values_list("title", flat=True))
    assert stored >= set(titles)


def test_approving_a_create_whose_review_changed_is_refused(hiring, ctx):
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    first = prepared_create(hiring.people.pk, "Charlie Brown")
    second = prepared_create(hiring.people.pk, "Charlie Browne")
    for action_id in (first, second):
        ok("commit_write", {"action_id": action_id})
    approve_prepared_action(action_id=first, reviewer="user:ana")
    with pytest.raises(AnchorError, match="'Charlie Brown'"):
        approve_prepared_action(action_id=second, reviewer="user:ana")
    assert PreparedAction.objects.get(pk=second).state == ActionState.STALE


def test_an_actions_deadline_is_the_earliest_cited_reviews_expiry(hiring):
    older = resolve("Kirat", collection_id=hiring.people.pk)
    newer = resolve("Abhishek", collection_id=hiring.people.pk)
    soon = timezone.now() + timedelta(minutes=2)
    ReviewTicket.objects.filter(pk=older["resolution_id"]).update(expires_at=soon)
    envelope = prepare(
        "link_records",
        {
            "source_id": hiring.kirat.pk,
            "relationship_type": "knows",
            "target_id": hiring.abhishek.pk,
        },
        [older["resolution_id"], newer["resolution_id"]],
    )
    action = PreparedAction.objects.get(pk=envelope["result"]["action_id"])
    assert action.expires_at == soon
    # The reply does not echo the deadline: a late commit is refused with STALE_REVIEW.
    assert "expires_at" not in envelope["result"]
    # A review that outlives the action's own lifetime: the lifetime decides.
    ReviewTicket.objects.filter(pk=newer["resolution_id"]).update(
        expires_at=timezone.now() + timedelta(hours=1)
    )
    alone = prepare(
        "update_record",
        {"record_id": hiring.abhishek.pk, "changes": {"x": 1}, "expected_version": 1},
        [newer["resolution_id"]],
    )
    lifetime = PreparedAction.objects.get(pk=alone["result"]["action_id"])
    assert lifetime.expires_at - lifetime.created_at == timedelta(minutes=15)


# --- a create comes with a review of what it made --------------------------------------------


def test_create_then_link_in_four_calls(hiring):
    title_review = resolve("Charlie Brown", collection_id=hiring.people.pk)
    kirat_review = resolve("Kirat", collection_id=hiring.people.pk)
    calls = 0

    def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return ok(name, arguments)

    created = tool(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Charlie Brown", "data": {}},
            "review_ids": [title_review["resolution_id"]],
            "decision_reason": "the user asked",
        },
    )
    committed = tool("commit_write", {"action_id": created["action_id"]})
    record_id = committed["result"]["record"]["record_id"]
    review = ReviewTicket.objects.get(pk=committed["review"]["resolution_id"])
    assert review.answer["selected_record_id"] == record_id, "it reviews the new record"
    link = tool(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": record_id,
                "relationship_type": "referred_by",
                "target_id": hiring.kirat.pk,
            },
            "review_ids": [committed["review"]["resolution_id"], kirat_review["resolution_id"]],
            "decision_reason": "the user asked",
        },
    )
    linked = tool("commit_write", {"action_id": link["action_id"]})
    assert linked["status"] == "committed" and linked["result"]["relationship"]
    assert "created" not in linked["result"], "made anew, as expected: said only when not"
    assert calls == 4
    assert "review" not in linked, "only creations come with a review of what they made"


def test_a_replayed_create_still_comes_with_a_review(hiring):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    first = ok("commit_write", {"action_id": action_id})
    again = ok("commit_write", {"action_id": action_id})
    assert again["replayed"] is True
    assert again["review"]["resolution_id"] != first["review"]["resolution_id"]
    review = ReviewTicket.objects.get(pk=again["review"]["resolution_id"])
    assert review.answer["selected_record_id"] == first["result"]["record"]["record_id"]


def test_a_created_collection_comes_with_a_discovery_that_covers_it(hiring):
    action_id = prepared_collection("garden plants", "Plants growing in the garden beds")
    committed = ok("commit_write", {"action_id": action_id})
    collection_id = committed["result"]["collection"]["collection_id"]
    discovery = ReviewTicket.objects.get(pk=committed["review"]["discovery_id"])
    assert collection_id in discovery.answer["catalog_ids"]
    # It reviews exactly this name and purpose: enough to edit the collection's description.
    arguments = collection_args("garden plants", "Plants growing in the garden beds")
    envelope = prepare(
        "update_collection",
        {**arguments, "collection_id": collection_id, "record_meaning": "one plant"},
        [committed["review"]["discovery_id"]],
    )
    assert envelope["ok"], envelope
