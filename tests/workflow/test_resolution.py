"""resolve_record: exact, alias, ID, similar, self, context, archived and incomplete cases."""

from __future__ import annotations

import pytest

from records import services
from records.models import RevisionCounter
from tests.conftest import link, make_collection, make_record
from tests.workflow.helpers import ok, refused
from workflow.models import ReviewTicket
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def test_typo_is_a_suggestion_never_a_selection(hiring):
    result = ok("resolve_record", {"query": "Kriat", "collection_id": hiring.people.pk})
    assert result["status"] == "needs_clarification"
    assert "selected_record_id" not in result, "none selected: left out"
    top = result["candidates"][0]
    assert top["record_id"] == hiring.kirat.pk
    assert "match" not in top and "score" not in top, "the reasons say them"
    assert top["reasons"][0].startswith("similar spelling to title 'Kirat' (score 0.")
    assert {"created_at", "status", "links", "data_preview"} <= set(top)


def test_exact_unique_active_name_is_resolved(hiring):
    result = ok("resolve_record", {"query": "  kIRAT ", "collection_id": hiring.people.pk})
    assert result["status"] == "resolved"
    assert result["selected_record_id"] == hiring.kirat.pk
    assert ReviewTicket.objects.filter(pk=result["resolution_id"]).exists()


def test_two_rahuls_need_clarification_with_distinguishing_context(hiring):
    result = ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    assert result["status"] == "needs_clarification"
    assert {c["record_id"] for c in result["candidates"]} == {
        hiring.rahul_backend.pk,
        hiring.rahul_frontend.pk,
    }
    previews = " ".join(c["data_preview"] for c in result["candidates"])
    assert "backend" in previews and "frontend" in previews


def test_archived_exact_match_needs_clarification(hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    result = ok("resolve_record", {"query": "Abhishek", "collection_id": hiring.people.pk})
    assert result["status"] == "needs_clarification"
    assert result["candidates"][0]["status"] == "archived"


def test_alias_and_id_match_exactly(hiring, ctx):
    services.record_alias_add(ctx=ctx, record_id=hiring.kirat.pk, alias="KS", expected_version=1)
    by_alias = ok("resolve_record", {"query": "ks"})
    assert by_alias["selected_record_id"] == hiring.kirat.pk
    assert "alias" in by_alias["candidates"][0]["reasons"][0]
    by_id = ok("resolve_record", {"query": hiring.backend.pk})
    assert by_id["selected_record_id"] == hiring.backend.pk


def test_short_names_are_not_fuzzy_matched(hiring, ctx):
    make_record(ctx, hiring.people, "Al")
    result = ok("resolve_record", {"query": "Ab", "collection_id": hiring.people.pk})
    assert result["status"] == "no_match"


def test_word_of_a_longer_name_is_a_suggestion(hiring, ctx):
    make_record(ctx, hiring.people, "Priya Raman")
    result = ok("resolve_record", {"query": "priya", "collection_id": hiring.people.pk})
    assert result["status"] == "needs_clarification"
    assert result["candidates"][0]["title"] == "Priya Raman"


def test_context_requires_links_to_every_context_record(hiring):
    # Kirat applied to both openings; only the backend application links to Junior Backend.
    result = ok(
        "resolve_record",
        {
            "query": "Kirat - Junior Backend",
            "context_record_ids": [hiring.kirat.pk, hiring.backend.pk],
        },
    )
    assert result["selected_record_id"] == hiring.kirat_backend.pk
    narrowed = ok(
        "resolve_record",
        {"query": "Kirat - Junior Backend", "context_record_ids": [hiring.frontend.pk]},
    )
    assert narrowed["status"] == "no_match"


def test_me_without_mapping_is_a_question_and_with_mapping_the_record(hiring, ctx):
    unmapped = ok("resolve_record", {"query": "me"})
    assert unmapped["status"] == "needs_clarification"
    assert "set_self" in unmapped["message"]
    services.self_mapping_set(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    mapped = ok("resolve_record", {"query": "Myself"})
    assert mapped["status"] == "resolved"
    assert mapped["selected_record_id"] == hiring.abhishek.pk


def test_self_mapping_belongs_to_one_actor(hiring, ctx, settings):
    services.self_mapping_set(ctx=ctx, record_id=hiring.abhishek.pk, expected_version=1)
    settings.ANCHOR_ACTOR_ID = "another-agent"
    assert ok("resolve_record", {"query": "me"})["status"] == "needs_clarification"


def test_more_than_twenty_matches_is_incomplete(ctx):
    people = make_collection(ctx, "crowd")
    for index in range(25):
        make_record(ctx, people, f"Sam {index}")
    result = ok("resolve_record", {"query": "sam", "collection_id": people.pk})
    assert result["status"] == "incomplete"
    assert len(result["candidates"]) == 20


def test_bad_input_is_refused_naming_the_field(hiring):
    error = refused("resolve_record", {"query": "   "}, "INVALID_INPUT")
    assert "query" in error["message"]
    error = refused("resolve_record", {"query": "x", "collection_id": "nope"}, "INVALID_INPUT")
    assert "collection_id" in error["message"]
    refused("resolve_record", {"query": "x", "context_record_ids": ["1" * 36]}, "INVALID_INPUT")


def test_other_workspace_collection_is_not_found(hiring, other_ctx):
    theirs = make_collection(other_ctx, "people")
    error = refused("resolve_record", {"query": "Kirat", "collection_id": theirs.pk}, "NOT_FOUND")
    assert error["details"]["field"] == "collection_id"
    assert error["message"].startswith(f"collection_id: no collection with ID {theirs.pk!r}")


def test_other_workspace_records_are_never_candidates(hiring, other_ctx):
    theirs = make_collection(other_ctx, "people")
    their_kirat = make_record(other_ctx, theirs, "Kirat")
    result = ok("resolve_record", {"query": "Kirat", "detail": True})
    assert result["selected_record_id"] == hiring.kirat.pk
    assert their_kirat.pk not in {c["record_id"] for c in result["candidates"]}
    assert {c["collection_id"] for c in result["candidates"]} <= {
        hiring.people.pk,
        hiring.applications.pk,
        hiring.interviews.pk,
    }


def test_ticket_depends_on_the_searched_scope_and_candidate_links(hiring):
    result = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    ticket = ReviewTicket.objects.get(pk=result["resolution_id"])
    assert f"names:{hiring.people.pk}" in ticket.counters
    assert f"links:{hiring.kirat.pk}" in ticket.counters
    assert "names:*" not in ticket.counters


def test_repeated_resolution_reuses_the_cached_names(hiring, django_assert_max_num_queries):
    ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    cached = names_cache.scope_names("local", hiring.people.pk)
    ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    assert names_cache.scope_names("local", hiring.people.pk) is cached


def test_names_change_rebuilds_the_cached_list(hiring, ctx):
    first = names_cache.scope_names("local", hiring.people.pk)
    make_record(ctx, hiring.people, "Zoë Müller")
    second = names_cache.scope_names("local", hiring.people.pk)
    assert second is not first
    assert "zoë müller" in second.names
    assert RevisionCounter.objects.get(key=f"names:{hiring.people.pk}").value == second.revision


def test_context_links_are_reported_per_candidate(hiring):
    result = ok("resolve_record", {"query": "Kirat - Junior Backend"})
    links = result["candidates"][0]["links"]
    assert {"-applicant-> Kirat (people)", "-opening-> Junior Backend (openings)"} <= set(links)


def test_linking_helper_is_idempotent(hiring, ctx):
    first = link(ctx, hiring.kirat_backend, "applicant", hiring.kirat)
    assert first.pk == link(ctx, hiring.kirat_backend, "applicant", hiring.kirat).pk


def test_no_match_says_create_when_the_thing_is_new_as_its_next_step_does(hiring):
    result = ok("resolve_record", {"query": "Zanele", "collection_id": hiring.people.pk})
    assert result["status"] == "no_match"
    assert "message" not in result  # the next step says it, once
    assert "expected answer before a create" in result["next_step"]
