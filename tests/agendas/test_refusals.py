"""Every refusal names the problem and leaves the agenda (and the whole database) unchanged."""

from __future__ import annotations

import pytest

from records import services
from records.errors import AnchorError
from tests.agendas.helpers import LIST, database_snapshot, driver, started
from tests.conftest import make_collection, make_record
from tests.envelope import expect_refused
from tests.mcp_client import call_tool
from workflow.agendas import steps
from workflow.agendas.guard import STALE_CURSOR
from workflow.scope import Scope


def refused_start(arguments: dict, field: str, code: str = "INVALID_INPUT") -> dict:
    before = database_snapshot()
    envelope = call_tool("agenda_start", {"title": "Chores", **arguments})
    error = expect_refused(envelope, "agenda_start", code)
    assert error["details"]["field"] == field, error
    assert database_snapshot() == before
    return error


def test_start_needs_a_source_or_a_reason_and_exactly_one_list(db):
    refused_start({"items": LIST}, "source_reference")
    refused_start({"items": LIST, "source_reference": "  "}, "source_reference")
    refused_start(
        {"items": LIST, "source_reference": "x", "unverified_source_reason": "y"},
        "unverified_source_reason",
    )
    refused_start({"source_reference": "x"}, "items")
    refused_start({"items": [], "source_reference": "x"}, "items")
    refused_start({"items": ["a", " "], "source_reference": "x"}, "items[1]")


def test_a_title_of_only_invisible_characters_is_refused(db):
    for title in ["\u200b\u200d", " \ufeff ", "\u2060"]:
        refused_start({"title": title, "items": LIST, "source_reference": "x"}, "title")


def test_start_without_a_source_records_the_reason(db):
    d = driver()
    result = d.ok(
        "agenda_start",
        {"title": "Chores", "items": LIST, "unverified_source_reason": "User listed them aloud"},
    )
    assert result["layer"]["unverified_source_reason"] == "User listed them aloud"
    assert "unverified: User listed them aloud" in result["whole_picture"]["text"]


def test_bound_records_must_be_active_and_in_one_collection(ctx):
    todos, notes = make_collection(ctx, "todos"), make_collection(ctx, "notes")
    first, other = make_record(ctx, todos, "Ship it"), make_record(ctx, notes, "Idea")
    gone = make_record(ctx, todos, "Old")
    services.record_archive(ctx=ctx, record_id=gone.pk, expected_version=1)
    refused_start({"record_ids": [first.pk, other.pk], "source_reference": "x"}, "record_ids")
    refused_start({"record_ids": [first.pk, first.pk], "source_reference": "x"}, "record_ids[1]")


def test_an_archived_record_is_refused_as_archived_naming_its_place(ctx):
    """The refusal every other change of an archived record gives (check_active)."""
    todos = make_collection(ctx, "todos")
    first, gone = make_record(ctx, todos, "Ship it"), make_record(ctx, todos, "Old")
    services.record_archive(ctx=ctx, record_id=gone.pk, expected_version=1)
    error = refused_start(
        {"record_ids": [first.pk, gone.pk], "source_reference": "x"}, "record_ids[1]", "ARCHIVED"
    )
    assert error["details"]["record_id"] == gone.pk
    assert error["details"]["archived_at"]
    assert error["message"].startswith(f"record_ids[1]: Record {gone.pk} ('Old') is archived;")


def test_a_record_of_another_workspace_is_not_found(ctx, other_ctx):
    mine = make_record(ctx, make_collection(ctx, "todos"), "Ship it")
    theirs = make_record(other_ctx, make_collection(other_ctx, "todos"), "Ship it")
    error = refused_start(
        {"record_ids": [mine.pk, theirs.pk], "source_reference": "x"}, "record_ids[1]", "NOT_FOUND"
    )
    assert error["message"].startswith(f"record_ids[1]: no record with ID {theirs.pk!r}")


def test_tokens_from_another_agenda_or_made_up_are_refused(db):
    d = driver()
    started(d)
    foreign = d.ok(
        "agenda_start", {"title": "Other", "items": ["x"], "source_reference": "elsewhere"}
    )["cursor_token"]
    started(d)  # d now holds the third agenda
    for token in (foreign, "r3.0123456789abcdef01234567", "nonsense"):
        error = d.refused(
            "agenda_step", d.mine(action="complete", text="done", cursor_token=token), STALE_CURSOR
        )
        assert error["details"]["current"]["cursor_token"] == d.token
    d.refused("agenda_step", d.mine(action="next", cursor_token=""), "INVALID_INPUT")


def test_every_out_of_order_step_is_refused_unchanged(db):
    d = driver()
    started(d)
    d.refused("agenda_step", d.mine(action="next"), "AGENDA_ORDER")
    d.refused("agenda_step", d.mine(action="next", text="moving on"), "INVALID_INPUT")
    d.refused("agenda_step", d.mine(action="revise", text="new"), "AGENDA_ORDER")
    d.refused("agenda_step", d.mine(action="complete", text="x", item_number=2), "INVALID_INPUT")
    d.refused("agenda_return", d.mine(outcome="done"), "AGENDA_ORDER")  # root has no parent
    d.refused("agenda_control", d.mine(action="finish", text="done"), "AGENDA_ORDER")
    d.refused("agenda_control", d.mine(action="resume"), "AGENDA_ORDER")  # not paused
    d.refused("agenda_control", d.mine(action="present", text="again"), "INVALID_INPUT")
    d.refused("agenda_control", d.mine(action="abandon"), "INVALID_INPUT")  # needs a reason
    d.refused("agenda_acknowledge", d.mine(presentation_id="pres-0"), "AGENDA_ORDER")
    d.refused("agenda_sync_records", d.mine(), "AGENDA_ORDER")  # active
    d.refused(
        "agenda_open_layer",
        d.mine(kind="child", items=["a"], source_reference=None),
        "INVALID_INPUT",
    )

    d.step("defer", "Waiting on the platform team.")
    d.refused("agenda_step", d.mine(action="block", text="x"), "AGENDA_ORDER")  # not current
    d.refused(
        "agenda_open_layer",
        d.mine(kind="child", items=["a"], source_reference="notes"),
        "AGENDA_ORDER",  # children open from the current item, not a deferred one
    )
    d.refused("agenda_step", d.mine(action="revise", text="x", item_number=9), "INVALID_INPUT")

    d.step("next")
    child = d.ok(
        "agenda_open_layer", d.mine(kind="child", items=["a", "b"], source_reference="notes")
    )
    d.refused("agenda_acknowledge", d.mine(presentation_id="pres-000000000000"), "INVALID_INPUT")
    d.acknowledge(child)
    d.step("complete", "a is fine")
    d.refused("agenda_return", d.mine(outcome="done"), "AGENDA_ORDER")  # b unresolved
    d.refused("agenda_control", d.mine(action="finish", text="done"), "AGENDA_ORDER")


def test_another_workspace_cannot_see_or_move_the_agenda(db):
    d = driver()
    started(d)
    before = database_snapshot()
    outsider = Scope(workspace_id="elsewhere", actor_id="someone")
    with pytest.raises(AnchorError) as refused:
        steps.step(
            outsider, agenda_id=d.agenda_id, cursor_token=d.token, action="complete", text="x"
        )
    assert refused.value.code == "NOT_FOUND"
    assert refused.value.details["field"] == "agenda_id"
    assert refused.value.message.startswith(f"agenda_id: no agenda with ID {d.agenda_id!r}")
    assert database_snapshot() == before


def test_pause_and_abandon_work_before_acknowledgement(db):
    d = driver()
    result = started(d, acknowledge=False)
    assert result["pending_presentation_id"]
    d.refused("agenda_step", d.mine(action="complete", text="x"), "PRESENTATION_REQUIRED")
    d.refused(
        "agenda_open_layer",
        d.mine(kind="interruption", items=["x"], source_reference="y"),
        "PRESENTATION_REQUIRED",
    )
    paused = d.ok("agenda_control", d.mine(action="pause"))
    assert paused["status"] == "paused" and paused["pending_presentation_id"] is None
    d.refused("agenda_control", d.mine(action="present"), "AGENDA_ORDER")
    closed = d.ok("agenda_control", d.mine(action="abandon", text="Plans changed."))
    assert [u["state"] for u in closed["closure"]["unresolved"]] == ["current", "open", "open"]
    assert closed["closure"]["sync_required"] is False
    d.refused("agenda_control", d.mine(action="resume"), "AGENDA_ORDER")
    d.refused("agenda_control", d.mine(action="abandon", text="again"), "AGENDA_ORDER")


INVISIBLE = ["\u200b", "\u200d\u2060", "\ufeff", " \u200b\u00ad\u2063 \n", "\u2066\u2069\t"]


def test_invisible_characters_are_not_a_conclusion_or_a_reason(db):
    d = driver()
    started(d)
    for text in INVISIBLE:
        for action in ("complete", "defer", "block"):
            error = d.refused("agenda_step", d.mine(action=action, text=text), "INVALID_INPUT")
            assert "invisible" in error["message"]
    d.step("complete", "Renamed.")
    for text in INVISIBLE:
        d.refused("agenda_step", d.mine(action="revise", text=text), "INVALID_INPUT")
        d.refused("agenda_control", d.mine(action="finish", text=text), "INVALID_INPUT")
        d.refused("agenda_control", d.mine(action="abandon", text=text), "INVALID_INPUT")
    refused_start({"items": LIST, "source_reference": "\u200b\ufeff"}, "source_reference")
    refused_start({"items": ["a", "\u200d\u2060"], "source_reference": "x"}, "items[1]")
    # Visible text around invisible characters is real text, kept exactly.
    d.step("revise", "\u200bRenamed to anchor_site.")
    assert d.ok("agenda_view", {"agenda_id": d.agenda_id})["current_item"]["conclusion"] == (
        "\u200bRenamed to anchor_site."
    )


def test_the_health_check_calls_an_invisible_conclusion_unhealthy(db):
    from workflow.models.agendas import AgendaItem

    d = driver()
    started(d)
    d.step("complete", "Renamed.")
    d.step("next")
    d.step("defer", "Later.")
    items = AgendaItem.objects.filter(layer__agenda_id=d.agenda_id)
    items.filter(number=1).update(conclusion="\u200d\u2060")
    items.filter(number=2).update(reason="\ufeff \u200b")
    problems = d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})["problems"]
    assert "item 1: completed without a conclusion." in problems, problems
    assert "item 2: deferred without a reason." in problems, problems


def test_source_numbering_is_not_frozen_into_the_items(db):
    d = driver()
    numbered = ["1. First", "2) Second", "(3) Third", "- Fourth", "5.  3.5 kg of flour"]
    result = started(d, numbered, acknowledge=False)
    text = result["whole_picture"]["text"]
    assert "1. [current] First" in text and "1. 1." not in text
    assert "2. [open] Second" in text and "3. [open] Third" in text
    assert "4. [open] Fourth" in text and "5. [open] 3.5 kg of flour" in text
    assert result["current_item"]["text"] == "First"
    from workflow.models.agendas import AgendaItem

    texts = list(
        AgendaItem.objects.filter(layer__agenda_id=d.agenda_id)
        .order_by("number")
        .values_list("text", flat=True)
    )
    assert texts == ["First", "Second", "Third", "Fourth", "3.5 kg of flour"]
    # Otherwise exact: numbers inside the text and unnumbered items stay as given.
    other = started(d, ["Drop 3.10 support", "2 files left. Check them"], acknowledge=False)
    assert "1. [current] Drop 3.10 support" in other["whole_picture"]["text"]
    assert "2. [open] 2 files left. Check them" in other["whole_picture"]["text"]
    refused_start({"items": ["1. a", "2. "], "source_reference": "x"}, "items[1]")
    health = d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})
    assert health["healthy"], health["problems"]
