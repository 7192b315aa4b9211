"""Record context is sized to its use: recent events say what changed, not two snapshots each,
and a well-linked record with some history reads in a few kilobytes."""

from __future__ import annotations

import pytest

from records import selectors, services
from tests.conftest import WORKSPACE, link, make_collection, make_record
from workflow.mcp.calls import reply_text

DEFAULT_REPLY_BUDGET = 8 * 1024


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


@pytest.mark.django_db
def test_a_busy_record_reads_in_under_8_kb_by_default(ctx):
    person = _busy_person(ctx)

    context = selectors.record_context(workspace_id=WORKSPACE, record_id=person.pk)

    size = len(reply_text({"ok": True, "result": context}).encode())
    assert len(context["links"]["outgoing"]) + len(context["links"]["incoming"]) == 20
    assert len(context["events"]) == 10 and context["events_truncated"] is True
    assert size < DEFAULT_REPLY_BUDGET, f"{size} bytes"


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
