"""Record context is sized to its use: recent events say what changed, not two snapshots each,
and the reply the client reads stays under 8,000 characters whatever the values hold, saying
what it cut and how to read it whole."""

from __future__ import annotations

import json
from typing import Any

import pytest

from records import selectors, services
from records.selectors.context_budget import REPLY_CHARS
from records.services import WriteContext
from tests.conftest import ACTOR, WORKSPACE, link, make_collection, make_record
from tests.mcp_client import call_tool, call_tool_raw


def _busy_person(ctx):
    """A person with 20 links (10 each way) and more than 10 events, shaped like real use."""
    people = make_collection(ctx, "people")
    openings = make_collection(ctx, "openings")
    person = make_record(
        ctx,
        people,
        "Kirat Singh",
        email="kirat@example.com",
        phone="+91 98765 43210",
        address="14 Residency Road, Bengaluru 560025",
        notes="Met at the meetup; strong on Django and PostgreSQL, wants backend work. " * 2,
    )
    for index in range(10):
        opening = make_record(ctx, openings, f"Opening {index}: Backend engineer, payments team")
        link(ctx, person, "interested_in", opening)
        referrer = make_record(ctx, people, f"Referrer {index}", email=f"r{index}@example.com")
        link(ctx, referrer, "referred", person)
    version = person.version
    for index in range(6):
        person = services.record_update(
            ctx=ctx,
            record_id=person.pk,
            changes={"stage": f"round {index}", "phone": f"+91 98765 4321{index}"},
            expected_version=version,
        )
        version = person.version
    return person


def _reply(arguments):
    """The context as the client reads it: the text block's JSON, and its length."""
    result = call_tool_raw("get_record_context", arguments)
    text = result.content[0].text
    return json.loads(text)["result"], len(text)


@pytest.mark.django_db
def test_a_busy_record_reads_whole_in_under_8000_characters(ctx):
    person = _busy_person(ctx)

    context, chars = _reply({"record_id": person.pk})

    assert len(context["links"]["outgoing"]) + len(context["links"]["incoming"]) == 20
    assert len(context["events"]) == 10 and context["events_truncated"] is True
    assert chars <= REPLY_CHARS and "trimmed" not in context, "nothing cut when it fits"


def _noted_person(ctx, note_text, updates=10, reason="test setup"):
    """The shape the budget was measured over: 20 links and a long note edited again and again."""
    people = make_collection(ctx, "people")
    person = make_record(ctx, people, "Kirat Singh", note=note_text("start"))
    for index in range(10):
        link(ctx, person, "knows", make_record(ctx, people, f"Колле́га {index} " + "ж" * 40))
        link(ctx, make_record(ctx, people, f"Referrer {index}"), "referred", person)
    writer = WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason=reason)
    for index in range(updates):
        person = services.record_update(
            ctx=writer,
            record_id=person.pk,
            changes={"note": note_text(index)},
            expected_version=person.version,
        )
    return person


LATIN = lambda tag: f"Round {tag}: " + "strong on Django and PostgreSQL, wants backend work. " * 4  # noqa: E731
CYRILLIC = lambda tag: f"Раунд {tag}: " + "силён в Django и PostgreSQL, хочет бэкенд. " * 5  # noqa: E731
CJK = lambda tag: f"第{tag}轮：" + "擅长数据库与后端开发，希望做支付系统。" * 11  # noqa: E731


@pytest.mark.django_db
@pytest.mark.parametrize("note_text", [LATIN, CYRILLIC, CJK], ids=["latin", "cyrillic", "cjk"])
def test_twenty_links_and_ten_edits_of_a_long_note_fit(ctx, note_text):
    assert len(note_text(9)) >= 210
    person = _noted_person(ctx, note_text)

    context, chars = _reply({"record_id": person.pk})

    assert chars <= REPLY_CHARS, chars
    # The record itself is whole; the events' old and new notes gave way first, then the
    # oldest event or so (the history goes on from the last one shown).
    assert context["record"]["data"]["note"] == note_text(9)
    assert len(context["events"]) >= 8 and context["events_truncated"] is True
    assert len(context["links"]["outgoing"]) + len(context["links"]["incoming"]) == 20
    assert "events" in context["trimmed"] and "record" not in context["trimmed"]
    assert "get_record_history" in context["trimmed"]["events"]["read_whole"]
    cut = [c for e in context["events"] for c in e.get("changes", []) if c.get("cut")]
    assert cut and all(c["new"].endswith("…") for c in cut)


@pytest.mark.django_db
def test_every_limit_at_its_longest_still_fits_and_says_how_to_read_it_whole(ctx):
    people = make_collection(ctx, "people")
    data: dict[str, Any] = {f"поле_{i}": "Щ" * 1_900 for i in range(3)}
    data["many"] = {f"k{i}": i for i in range(300)}
    person = make_record(ctx, people, "Я" * 300, **data)
    for index in range(20):
        person = services.record_alias_add(
            ctx=ctx,
            record_id=person.pk,
            alias=f"{index} " + "ы" * 290,
            expected_version=person.version,
        )
    for index in range(30):
        other = make_record(ctx, people, f"{index} " + "ю" * 290)
        link(ctx, person, "knows", other)
        link(ctx, other, "knows", person)
    reason = WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason="э" * 1_900)
    for index in range(30):
        person = services.record_update(
            ctx=reason,
            record_id=person.pk,
            changes={"поле_0": f"{index}" + "Щ" * 1_900},
            expected_version=person.version,
        )

    asked = {"record_id": person.pk, "relationship_limit": 100, "event_limit": 100}
    context, chars = _reply(asked)

    assert chars <= REPLY_CHARS, chars
    trimmed = context["trimmed"]
    assert set(trimmed) >= {"note", "record", "events", "links"}
    assert "whole=true" in trimmed["record"]["read_whole"]
    assert "поле_0" in trimmed["record"]["data_paths"]
    assert "linked_to" in trimmed["links"]["read_whole"]
    # Whole, it is all there; and the history goes on from the last event shown.
    whole, _ = _reply({**asked, "whole": True})
    assert whole["record"]["data"] == person.data and "trimmed" not in whole
    history = call_tool(
        "get_record_history",
        {"record_id": person.pk, "cursor": context["history_next_cursor"], "limit": 100},
    )["result"]
    shown = [e["event_id"] for e in context["events"]]
    every = [e["event_id"] for e in whole["events"]]
    assert shown + [e["event_id"] for e in history["events"]][: len(every) - len(shown)] == every


@pytest.mark.django_db
def test_recent_events_list_changed_paths_not_snapshots(ctx):
    person = _busy_person(ctx)

    events = selectors.record_context(workspace_id=WORKSPACE, record_id=person.pk)["events"]

    latest = events[0]
    assert latest["kind"] == "record.updated"
    assert "before" not in latest and "after" not in latest
    assert latest["changes"] == [
        {"path": ["data", "phone"], "old": "+91 98765 43214", "new": "+91 98765 43215"},
        {"path": ["data", "stage"], "old": "round 4", "new": "round 5"},
    ]
    full = selectors.record_history(workspace_id=WORKSPACE, record_id=person.pk)["events"][0]
    assert full["event_id"] == latest["event_id"]
    assert full["after"]["data"]["stage"] == "round 5", "snapshots stay in the history"


@pytest.mark.django_db
def test_a_link_to_an_archived_record_says_so_and_others_stay_short(ctx):
    people = make_collection(ctx, "people")
    openings = make_collection(ctx, "openings")
    person = make_record(ctx, people, "Priya")
    kept = make_record(ctx, openings, "Backend")
    closed = make_record(ctx, openings, "Frontend")
    link(ctx, person, "interested_in", kept)
    link(ctx, person, "interested_in", closed)
    services.record_archive(ctx=ctx, record_id=closed.pk, expected_version=closed.version)

    outgoing = selectors.record_context(workspace_id=WORKSPACE, record_id=person.pk)["links"][
        "outgoing"
    ]

    by_title = {link["title"]: link for link in outgoing}
    assert by_title["Frontend"]["archived"] is True
    assert "archived" not in by_title["Backend"]
    assert by_title["Backend"]["collection"] == "openings"
    assert by_title["Backend"]["record_id"] == kept.pk
