"""Replies carry what the agent uses: no echoed request, no provisional IDs or timestamps, links
capped with a count on a settled answer; whatever tells namesakes apart stays whole."""

from __future__ import annotations

from tests.conftest import link
from tests.workflow.helpers import ok


def test_a_resolved_answer_is_the_chosen_record_without_echoes(hiring, ctx):
    link(ctx, hiring.kirat_backend, "noted_by", hiring.kirat)  # four links: one past the cap
    review = ok("resolve_record", {"query": "Kirat - Junior Backend"})
    assert review["status"] == "resolved"
    assert review["selected_record_id"] == hiring.kirat_backend.pk
    for echo in ("query", "collection_id", "context_record_ids", "expires_at", "message"):
        assert echo not in review, echo
    [chosen] = review["candidates"]
    assert chosen["title"] == "Kirat - Junior Backend" and chosen["version"]
    assert chosen["record_id"] == review["selected_record_id"]
    assert "created_at" not in chosen and "score" not in chosen
    assert len(chosen["links"]) == 3 and chosen["links_more"] == 1
    assert all("archived" not in one for one in chosen["links"])
    assert review["next_step"].count(".") == 1, "one line"

    whole = ok("resolve_record", {"query": "Kirat - Junior Backend", "detail": True})
    assert whole["query"] == "Kirat - Junior Backend" and whole["expires_at"]
    assert len(whole["candidates"][0]["links"]) == 4 and whole["candidates"][0]["created_at"]


def test_similar_spellings_beside_a_resolved_name_are_counted_not_shown(hiring):
    review = ok("resolve_record", {"query": "Kirat"})
    assert [c["title"] for c in review["candidates"]] == ["Kirat"]
    assert review["similar_not_shown"] >= 2


def test_namesakes_keep_everything_that_tells_them_apart(hiring):
    review = ok("resolve_record", {"query": "Rahul", "collection_id": hiring.people.pk})
    assert review["status"] == "needs_clarification" and review["message"]
    first, second = review["candidates"]
    for candidate in (first, second):
        assert {"record_id", "collection", "data_preview", "created_at", "links", "reasons"} <= set(
            candidate
        )
    assert first["data_preview"] != second["data_preview"]
    assert first["record_id"] != second["record_id"]


def test_a_preview_has_no_provisional_id_or_time_and_a_commit_no_times(hiring):
    review = ok("resolve_record", {"query": "Zoya", "collection_id": hiring.people.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Zoya", "data": {"a": 1}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user introduced Zoya",
        },
    )
    record = prepared["preview"]["record"]
    assert record["title"] == "Zoya" and record["data"] == {"a": 1}
    assert not {"record_id", "created_at", "updated_at"} & set(record)
    assert "preview_note" not in prepared and "expires_at" not in prepared
    assert "before" not in prepared["next_step"]
    committed = ok("commit_write", {"action_id": prepared["action_id"]})
    assert committed["result"]["record"]["record_id"], "the real ID comes with the commit"
    assert "committed_at" not in committed and "created_at" not in committed["result"]["record"]
    assert "expires_at" not in committed["review"] and committed["review"]["resolution_id"]


def test_an_import_keeps_flagged_rows_whole_and_trims_clean_ones(hiring):
    prepared = ok(
        "prepare_import",
        {
            "collection_id": hiring.people.pk,
            "rows": [{"title": "Kirat"}, {"title": "Brand New"}],
            "decision_reason": "a pasted list",
        },
    )
    flagged, clean = prepared["rows"]
    assert flagged["status"] == "possible_duplicate"
    [candidate] = flagged["candidates"]
    assert candidate["record_id"] == hiring.kirat.pk and candidate["created_at"]
    assert clean == {"key": "1", "title": "Brand New", "status": "clean"}
    assert "collection_id" not in prepared
    assert all("record_id" not in row for row in prepared["preview"]["rows"].values())


def test_the_digest_leaves_out_what_is_empty(hiring):
    digest = ok("workspace_digest")
    assert digest["collections"] and "recent_changes" in digest
    for quiet in ("workspace_id", "actor_id", "open_agendas", "your_open_prepared_actions"):
        assert quiet not in digest, quiet
