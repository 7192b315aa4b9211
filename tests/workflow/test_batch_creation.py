"""Create records and link them in one batch: an end may name what an earlier item creates.

Two new records in two collections and a link between them take three calls (resolve both
titles, prepare the batch, commit it); each creation keeps its own title review, and the
batch refuses what no review covers.
"""

from __future__ import annotations

import pytest

from records.models import AuditEvent, Record, Relationship
from tests.workflow.helpers import ok, refused, store_snapshot
from workflow.models import ReviewTicket
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def resolve_both(hiring, person="Meera Iyer", opening="Staff Designer"):
    items = ok(
        "batch_resolve_records",
        {
            "requests": [
                {"query": person, "collection_id": hiring.people.pk},
                {"query": opening, "collection_id": hiring.openings.pk},
            ]
        },
    )["items"]
    assert [i["result"]["status"] for i in items] == ["no_match", "no_match"]
    return [i["result"]["resolution_id"] for i in items]


def create(collection, title, review_id, **data):
    return {
        "operation": "create_record",
        "arguments": {"collection_id": collection.pk, "title": title, "data": data},
        "review_ids": [review_id],
        "decision_reason": "the user named them",
    }


def link_items(source, target, **extra):
    return {
        "operation": "link_records",
        "arguments": {"source_id": source, "relationship_type": "applied_to", "target_id": target},
        "decision_reason": "she applied",
        **extra,
    }


def test_two_records_in_two_collections_and_their_link_in_three_calls(hiring):
    person_review, opening_review = resolve_both(hiring)
    before = store_snapshot()
    prepared = ok(
        "prepare_batch_write",
        {
            "actions": [
                create(hiring.people, "Meera Iyer", person_review, city="Chennai"),
                create(hiring.openings, "Staff Designer", opening_review),
                link_items("actions[0]", "actions[1]"),
            ]
        },
    )
    assert store_snapshot() == before, "prepare writes nothing"
    committed = ok("commit_batch_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed"
    meera = Record.objects.get(title="Meera Iyer", collection=hiring.people)
    designer = Record.objects.get(title="Staff Designer", collection=hiring.openings)
    assert Relationship.objects.filter(
        source=meera, relationship_type="applied_to", target=designer
    ).exists()
    items = committed["result"]["items"]
    assert items[0]["record"] == {"record_id": meera.pk}, "a new record is version 1"
    link = Relationship.objects.get(pk=items[2]["relationship"]["relationship_id"])
    assert (link.source_id, link.target_id) == (meera.pk, designer.pk)
    # Each created record comes with a review the next write can cite.
    review = ReviewTicket.objects.get(pk=items[0]["review"]["resolution_id"])
    assert review.answer["selected_record_id"] == meera.pk
    events = AuditEvent.objects.filter(action_id=prepared["action_id"])
    assert list(events.order_by("item_index").values_list("item_index", flat=True)) == [0, 1, 2]


def test_a_link_to_an_existing_record_still_needs_its_review(hiring):
    person_review, _ = resolve_both(hiring)
    before = store_snapshot()
    error = refused(
        "prepare_batch_write",
        {
            "actions": [
                create(hiring.people, "Meera Iyer", person_review),
                link_items("actions[0]", hiring.backend.pk, review_ids=[person_review]),
            ]
        },
        "REVIEW_REQUIRED",
    )
    assert "actions[1]" in error["message"] and "target_id" in error["message"]
    error = refused(
        "prepare_batch_write",
        {
            "actions": [
                create(hiring.people, "Meera Iyer", person_review),
                link_items("actions[0]", hiring.backend.pk),
            ]
        },
        "INVALID_INPUT",
    )
    assert "review_ids" in error["message"]
    assert store_snapshot() == before


def test_a_creation_still_needs_its_title_review(hiring):
    _, opening_review = resolve_both(hiring)
    refused(
        "prepare_batch_write",
        {"actions": [create(hiring.people, "Meera Iyer", opening_review)]},
        "REVIEW_REQUIRED",
    )


def test_one_name_created_twice_in_a_batch_is_refused(hiring):
    person_review, _ = resolve_both(hiring)
    error = refused(
        "prepare_batch_write",
        {
            "actions": [
                create(hiring.people, "Meera Iyer", person_review),
                create(hiring.people, "meera  iyer", person_review),
            ]
        },
        "INVALID_INPUT",
    )
    assert "actions[1]" in error["message"] and "actions[0] already creates" in error["message"]


@pytest.mark.parametrize(
    ("actions", "field"),
    [
        # a reference forward, or to an item that creates nothing
        (lambda h, r: [link_items("actions[1]", h.backend.pk), None], "actions[0].arguments"),
        (
            lambda h, r: [
                {
                    "operation": "archive_record",
                    "arguments": {"record_id": h.kirat.pk, "expected_version": 1},
                    "review_ids": [r],
                    "decision_reason": "x",
                },
                link_items("actions[0]", h.backend.pk, review_ids=[r]),
            ],
            "actions[1].arguments.source_id",
        ),
    ],
)
def test_a_reference_must_name_an_earlier_creation(hiring, actions, field):
    person_review, _ = resolve_both(hiring)
    built = [a for a in actions(hiring, person_review) if a is not None]
    if len(built) == 1:
        built.append(create(hiring.people, "Meera Iyer", person_review))
    error = refused("prepare_batch_write", {"actions": built}, "INVALID_INPUT")
    assert field in error["message"], error


def test_prepare_write_refuses_a_batch_reference(hiring):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    error = refused(
        "prepare_write",
        {
            "operation": "link_records",
            "arguments": {
                "source_id": "actions[0]",
                "relationship_type": "knows",
                "target_id": hiring.kirat.pk,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "x",
        },
        "INVALID_INPUT",
    )
    assert "prepare_batch_write" in error["message"]


def test_a_reviewer_reads_a_reference_as_the_record_the_batch_creates(hiring):
    from workflow.admin.changes import Lookup, one_line, review_operation

    args = {
        "source_id": "actions[0]",
        "relationship_type": "applied_to",
        "target_id": hiring.backend.pk,
    }
    lookup = Lookup.load(hiring.people.workspace_id, [args["source_id"], args["target_id"]])
    review = review_operation("link_records", args, lookup)
    source, _, target = review.links[0]
    assert (source.title, source.note) == ("the record actions[0] creates", "in this batch")
    assert target.title == "Junior Backend"
    assert "the record actions[0] creates" in one_line(review)


def test_a_batch_creating_in_a_gated_collection_waits_for_a_person(hiring, ctx):
    from records import services

    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.openings.pk, requires_approval=True
    )
    person_review, opening_review = resolve_both(hiring)
    prepared = ok(
        "prepare_batch_write",
        {
            "actions": [
                create(hiring.people, "Meera Iyer", person_review),
                create(hiring.openings, "Staff Designer", opening_review),
                link_items("actions[0]", "actions[1]"),
            ]
        },
    )
    assert prepared["requires_human_approval"] is True
    assert "needs a person's approval" in prepared["next_step"]
    held = ok("commit_batch_write", {"action_id": prepared["action_id"]})
    assert held["status"] == "awaiting_approval"
    assert not Record.objects.filter(title__in=["Meera Iyer", "Staff Designer"]).exists()
    from workflow.actions import approve_prepared_action

    approved = approve_prepared_action(action_id=prepared["action_id"], reviewer="user:ana")
    assert approved["status"] == "committed"
    meera = Record.objects.get(title="Meera Iyer")
    assert Relationship.objects.filter(source=meera, target__title="Staff Designer").exists()
