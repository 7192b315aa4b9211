"""A commit whose review's names counter moved re-checks only the names written since.

Each test counts the whole re-evaluations (evaluate_resolution / evaluate_discovery calls made
by workflow.freshness) beside what the commit answers: the delta check must say "stands"
without one when nothing written can matter, and hand over to one (which decides) otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from records import services
from records.counters import names_key
from records.errors import AnchorError
from records.models import NameChange, Record, RevisionCounter
from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok, refused
from tests.workflow.test_freshness import prepare, prepared_collection, prepared_create
from workflow import freshness
from workflow.discovery import evaluate_discovery
from workflow.freshness import check_fresh
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.names import cache as names_cache
from workflow.names import delta as name_delta
from workflow.names import view as names_view
from workflow.resolution import evaluate_resolution


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


@pytest.fixture
def full_runs(monkeypatch) -> list[str]:
    """The queries of every whole re-evaluation freshness makes, in order."""
    calls: list[str] = []
    real_resolution = evaluate_resolution
    real_discovery = evaluate_discovery

    def resolution(scope, **request: Any):
        calls.append(request["query_text"])
        return real_resolution(scope, **request)

    def discovery(workspace_id: str, **request: Any):
        calls.append(request["name_text"])
        return real_discovery(workspace_id, **request)

    monkeypatch.setattr(freshness, "evaluate_resolution", resolution)
    monkeypatch.setattr(freshness, "evaluate_discovery", discovery)
    return calls


def commit(action_id: str) -> dict[str, Any]:
    return ok("commit_write", {"action_id": action_id})


def test_an_unrelated_name_written_by_another_writer_commits_without_a_full_re_run(
    hiring, ctx, full_runs
):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    make_record(ctx, hiring.people, "Delphine Arnaud")
    make_record(ctx, hiring.people, "Edmund Ferreira")
    assert commit(action_id)["status"] == "committed"
    assert full_runs == []
    assert Record.objects.filter(collection=hiring.people, title="Charlie Brown").exists()


@pytest.mark.parametrize("written", ["Charlie Brown", "Charlie Browne", "charlie brown"])
def test_the_same_or_a_near_name_written_since_makes_the_commit_stale(
    hiring, ctx, full_runs, written
):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    make_record(ctx, hiring.people, "Delphine Arnaud")
    rival = make_record(ctx, hiring.people, written)
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    assert error["details"]["new_candidates"] == [{"record_id": rival.pk, "title": written}]
    assert rival.pk in error["message"]
    assert "Charlie Brown" in full_runs  # the whole re-run is the one that said how
    assert PreparedAction.objects.get(pk=action_id).state == ActionState.STALE
    written_twice = Record.objects.filter(collection=hiring.people, title="Charlie Brown")
    assert written_twice.count() == (1 if written == "Charlie Brown" else 0)


def test_a_name_written_in_another_collection_does_not_touch_a_collection_review(
    hiring, ctx, full_runs
):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    make_record(ctx, hiring.openings, "Charlie Brown")  # names:<openings> moved, not people's
    assert commit(action_id)["status"] == "committed"
    assert full_runs == []


def test_a_workspace_wide_review_sees_a_matching_name_in_any_collection(hiring, ctx, full_runs):
    review = ok("resolve_record", {"query": "Charlie Brown"})
    assert review["status"] == "no_match"
    make_record(ctx, hiring.openings, "Delphine Arnaud")
    check_fresh(list(ReviewTicket.objects.filter(pk=review["resolution_id"])))
    assert full_runs == []
    rival = make_record(ctx, hiring.openings, "Charlie Browne")
    with pytest.raises(AnchorError) as raised:
        check_fresh(list(ReviewTicket.objects.filter(pk=review["resolution_id"])))
    assert raised.value.code == "STALE_REVIEW"
    assert raised.value.details["new_candidates"] == [
        {"record_id": rival.pk, "title": "Charlie Browne"}
    ]


def test_a_gap_in_the_names_log_falls_back_to_the_full_re_run(hiring, ctx, full_runs):
    unrelated = prepared_create(hiring.people.pk, "Charlie Brown")
    written = make_record(ctx, hiring.people, "Delphine Arnaud")
    deleted, _ = NameChange.objects.filter(
        workspace_id=ctx.workspace_id, key=names_key(hiring.people.pk), record_id=written.pk
    ).delete()
    assert deleted == 1
    assert commit(unrelated)["status"] == "committed"
    assert full_runs and set(full_runs) == {"Charlie Brown"}

    full_runs.clear()
    similar = prepared_create(hiring.people.pk, "Edmund Ferreira")
    rival = make_record(ctx, hiring.people, "Edmund Ferreiro")
    NameChange.objects.filter(record_id=rival.pk).delete()
    error = refused("commit_write", {"action_id": similar}, "STALE_REVIEW")
    expected = [{"record_id": rival.pk, "title": "Edmund Ferreiro"}]
    assert error["details"]["new_candidates"] == expected
    assert "Edmund Ferreira" in full_runs


def test_more_names_written_than_the_delta_reads_falls_back_to_the_full_re_run(
    hiring, ctx, full_runs, monkeypatch
):
    monkeypatch.setattr(name_delta, "MAX_WRITTEN", 2)
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    for title in ("Delphine Arnaud", "Edmund Ferreira", "Farida Haddad"):
        make_record(ctx, hiring.people, title)
    assert commit(action_id)["status"] == "committed"
    assert "Charlie Brown" in full_runs


def test_a_counter_gone_back_falls_back_to_the_full_re_run(hiring, ctx, full_runs):
    review = ok("resolve_record", {"query": "Charlie Brown", "collection_id": hiring.people.pk})
    key = names_key(hiring.people.pk)
    RevisionCounter.objects.filter(workspace_id=ctx.workspace_id, key=key).update(value=0)
    check_fresh(list(ReviewTicket.objects.filter(pk=review["resolution_id"])))
    assert full_runs == ["Charlie Brown"]


def test_a_candidate_renamed_away_makes_the_review_stale(hiring, ctx, full_runs):
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    envelope = prepare(
        "update_record",
        {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
        [review["resolution_id"]],
    )
    services.record_rename(ctx=ctx, record_id=hiring.kirat.pk, title="Zubin", expected_version=1)
    error = refused("commit_write", {"action_id": envelope["result"]["action_id"]}, "STALE_REVIEW")
    assert "is no longer a candidate" in error["message"] and hiring.kirat.pk in error["message"]
    assert "Kirat" in full_runs


def test_another_record_renamed_into_a_match_makes_the_review_stale(hiring, ctx, full_runs):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    other = make_record(ctx, hiring.people, "Delphine Arnaud")
    services.record_rename(ctx=ctx, record_id=other.pk, title="Charlie Browne", expected_version=1)
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    expected = [{"record_id": other.pk, "title": "Charlie Browne"}]
    assert error["details"]["new_candidates"] == expected


def test_a_candidate_written_without_changing_its_standing_is_re_run_and_stands(
    hiring, ctx, full_runs
):
    """A written candidate always hands over to the full re-run, which finds nothing changed."""
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    services.record_alias_add(ctx=ctx, record_id=hiring.kirat.pk, alias="KS", expected_version=1)
    check_fresh(list(ReviewTicket.objects.filter(pk=review["resolution_id"])))
    assert full_runs == ["Kirat"]


def test_a_scope_grown_past_the_scan_limit_is_re_run_and_stale(hiring, ctx, full_runs, monkeypatch):
    action_id = prepared_create(hiring.people.pk, "Charlie Brown")
    count = Record.objects.filter(collection=hiring.people).count()
    make_record(ctx, hiring.people, "Delphine Arnaud")
    for module in (name_delta, names_view):  # the limit both the delta and the rule read
        monkeypatch.setattr(module, "MAX_SCOPE_RECORDS", count)
    error = refused("commit_write", {"action_id": action_id}, "STALE_REVIEW")
    assert "incomplete" in error["message"]
    assert "Charlie Brown" in full_runs


def test_a_discovery_is_still_re_run_whole(hiring, ctx, full_runs):
    action_id = prepared_collection("garden plants", "Plants growing in the garden beds")
    make_collection(ctx, "vehicles", "Cars and bikes we maintain")
    assert commit(action_id)["status"] == "committed"
    assert "garden plants" in full_runs
