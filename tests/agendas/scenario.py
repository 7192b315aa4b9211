"""The pressure scenario of issue 7, written once and run in process and across server processes.

A five-item review list bound to records, a child list under item 3, an interruption, a delayed
command with a stale token, "next" before the parent synthesis, a whitespace conclusion, pause
in one process and resume in another, closure with one deferred item, and sync back to the
records with one of them changed meanwhile. Every refusal is checked to leave the agenda as it
was (Driver.refused).
"""

from __future__ import annotations

import re
from typing import Any

from tests.agendas.driver import Driver

FINDINGS = [
    "Parser accepts trailing commas in config files",
    "Retry loop in the uploader never backs off",
    "Auth module mixes session and token logic",
    "Error messages leak file system paths",
    "Missing tests for the migration rollback",
]
AUTH_QUESTIONS = [
    "Where does the session code end?",
    "Which callers use tokens directly?",
    "Can the split land without a migration?",
]


def seed_findings(d: Driver) -> dict[str, Any]:
    """A 'review findings' collection with the five findings, created through the tools."""
    discovery = d.ok(
        "discover_collections",
        {"name": "review findings", "purpose": "Findings from code reviews, one per record"},
    )
    created = d.write(
        "create_collection",
        {
            "name": "review findings",
            "purpose": "Findings from code reviews, one per record",
            "record_meaning": "One finding a reviewer raised",
            "typical_fields": ["status", "notes"],
            "relationship_guidance": "",
        },
        [discovery["discovery_id"]],
    )
    collection_id = created["collection"]["collection_id"]
    record_ids = []
    for title in FINDINGS:
        review = d.ok("resolve_record", {"query": title, "collection_id": collection_id})
        assert review["status"] == "no_match"
        result = d.write(
            "create_record",
            {"collection_id": collection_id, "title": title, "data": {"status": "open"}},
            [review["resolution_id"]],
        )
        record_ids.append(result["record"]["record_id"])
    return {"collection_id": collection_id, "record_ids": record_ids}


def record_data(d: Driver, record_id: str) -> dict[str, Any]:
    context = d.ok("get_record_context", {"record_id": record_id, "event_limit": 0})
    return context["record"]["data"]


def numbers(picture_text: str) -> list[str]:
    """Item numbers in the order the whole picture shows them."""
    return re.findall(r"^\s*(?:▶ )?\s*([\w.]+)\. \[", picture_text, flags=re.MULTILINE)


def first_half(d: Driver, seeded: dict[str, Any]) -> None:
    """Start, work items 1-3 (child list, interruption, refusals), reach item 4, pause."""
    start = d.ok(
        "agenda_start",
        {
            "title": "PR 42 review findings",
            "record_ids": seeded["record_ids"],
            "source_reference": "Ana's review of PR #42: five numbered findings",
        },
    )
    text = start["whole_picture"]["text"]
    assert numbers(text) == ["1", "2", "3", "4", "5"]
    for number, finding in enumerate(FINDINGS, start=1):
        assert f"{number}. [" in text and finding in text
    assert start["current_item"]["number"] == "1"
    assert "1. [current] Parser accepts" in start["whole_picture"]["text"]

    # Nothing moves before the user has seen the whole picture.
    d.refused("agenda_step", d.mine(action="complete", text="done"), "PRESENTATION_REQUIRED")
    d.acknowledge(start)

    # Whitespace is not a conclusion.
    d.refused("agenda_step", d.mine(action="complete", text="  \n\t "), "INVALID_INPUT")
    d.step("complete", "Trailing commas are rejected now; a parser test covers it.")
    d.refused("agenda_step", d.mine(action="defer", text="too late"), "AGENDA_ORDER")
    assert d.step("next")["current_item"]["number"] == "2"
    d.refused("agenda_step", d.mine(action="next"), "AGENDA_ORDER")  # 2 is unresolved
    d.step("defer", "Needs a product decision on back-off limits.")
    assert d.step("next")["current_item"]["number"] == "3"

    # Item 3 opens a child list.
    child = d.ok(
        "agenda_open_layer",
        d.mine(
            kind="child",
            items=AUTH_QUESTIONS,
            source_reference="Ana's follow-up questions on finding 3",
        ),
    )
    assert child["current_item"]["number"] == "3.1"
    assert numbers(child["whole_picture"]["text"])[2:6] == ["3", "3.1", "3.2", "3.3"]
    d.acknowledge(child)
    delayed_token = d.step("complete", "Session code ends at the middleware.")["cursor_token"]
    assert d.step("next")["current_item"]["number"] == "3.2"

    # A delayed command from before "next" arrives: refused, with the current state.
    error = d.refused(
        "agenda_step",
        {
            "agenda_id": d.agenda_id,
            "cursor_token": delayed_token,
            "action": "revise",
            "text": "Late rewording of 3.1",
        },
        "STALE_CURSOR",
    )
    assert error["details"]["current"]["current_item"]["number"] == "3.2"
    assert error["details"]["current"]["cursor_token"] == d.token

    # An interruption: handled on top, then back to 3.2 without a synthesis.
    interruption = d.ok(
        "agenda_open_layer",
        d.mine(
            kind="interruption",
            items=["CI is red on main: flaky snapshot test"],
            source_reference="User: 'wait, CI is red, look at that first'",
        ),
    )
    assert interruption["current_item"]["number"] == "i1.1"
    d.acknowledge(interruption)
    d.step("complete", "Quarantined the flaky snapshot test; CI is green.")
    back = d.ok("agenda_return", d.mine(outcome="CI fixed by quarantining one flaky test."))
    assert back["current_item"]["number"] == "3.2"
    assert "awaiting_synthesis" not in back["current_item"]
    d.refused("agenda_step", d.mine(action="complete", text="x"), "PRESENTATION_REQUIRED")
    d.acknowledge(back)

    d.step("complete", "Two callers use tokens directly: the CLI and the webhook.")
    d.step("next")
    d.step("complete", "Yes: the split only moves code.")
    d.refused("agenda_step", d.mine(action="next"), "AGENDA_ORDER")  # list exhausted

    # Returning stops on item 3 awaiting its synthesis.
    returned = d.ok(
        "agenda_return",
        d.mine(outcome="Split auth into session and token modules; CLI and webhook move."),
    )
    assert returned["current_item"]["number"] == "3"
    assert returned["current_item"]["awaiting_synthesis"] is True
    assert returned["returned_from"]["counts"] == "3 completed"
    d.acknowledge(returned)
    d.refused("agenda_step", d.mine(action="next"), "SYNTHESIS_REQUIRED")
    d.refused("agenda_step", d.mine(action="complete", text="done"), "SYNTHESIS_REQUIRED")
    d.refused("agenda_step", d.mine(action="revise", text=" "), "INVALID_INPUT")
    synthesis = d.step(
        "revise",
        "Split auth into session and token modules (3.1-3.3); the CLI and webhook move to "
        "the token module; no migration needed.",
    )
    assert synthesis["current_item"]["state"] == "completed"
    assert d.step("next")["current_item"]["number"] == "4"

    paused = d.ok("agenda_control", d.mine(action="pause", text="User has a meeting."))
    assert paused["status"] == "paused"


def change_finding_meanwhile(d: Driver, seeded: dict[str, Any]) -> str:
    """Another conversation edits finding 1's record while the agenda is paused."""
    record_id = seeded["record_ids"][0]
    review = d.ok("resolve_record", {"query": record_id, "collection_id": seeded["collection_id"]})
    assert review["status"] == "resolved"
    d.write(
        "update_record",
        {"record_id": record_id, "changes": {"notes": "Reopened by Ana"}, "expected_version": 1},
        [review["resolution_id"]],
    )
    return record_id


def second_half(d: Driver, seeded: dict[str, Any], agenda_id: str) -> dict[str, Any]:
    """In a new conversation: find the agenda, resume, finish with one deferred item, sync."""
    listed = d.ok("agenda_view", {})
    assert [a["agenda_id"] for a in listed["agendas"]] == [agenda_id]
    view = d.ok("agenda_view", {"agenda_id": agenda_id})
    assert view["status"] == "paused"
    assert view["current_item"]["number"] == "4"
    d.refused("agenda_step", d.mine(action="complete", text="x"), "AGENDA_ORDER")  # paused

    resumed = d.ok("agenda_control", d.mine(action="resume"))
    assert "▶ 4. [current]" in resumed["whole_picture"]["text"]
    d.acknowledge(resumed)
    d.step("complete", "Paths are redacted from user-facing errors.")
    d.step("next")
    d.step("complete", "Rollback tests added for the last three migrations.")
    d.refused("agenda_control", d.mine(action="finish", text="\t"), "INVALID_INPUT")
    closed = d.ok(
        "agenda_control",
        d.mine(action="finish", text="Four findings resolved; back-off waits for product."),
    )
    closure = closed["closure"]
    assert [(u["number"], u["state"]) for u in closure["unresolved"]] == [("2", "deferred")]
    assert closure["sync_required"] is True
    d.refused("agenda_step", d.mine(action="next"), "AGENDA_ORDER")  # closed

    synced = d.ok(
        "agenda_sync_records",
        d.mine(status_values={"completed": "done", "deferred": "deferred"}),
    )
    by_item = {r["item"]: r for r in synced["sync"]["results"]}
    assert synced["sync"]["counts"] == {"changed": 1, "synced": 4}
    assert by_item["1"]["status"] == "changed" and by_item["1"]["current_version"] == 2
    assert synced["sync_state"] == "synced_with_conflicts"

    untouched = record_data(d, seeded["record_ids"][0])
    assert untouched == {"status": "open", "notes": "Reopened by Ana"}
    deferred = record_data(d, seeded["record_ids"][1])
    assert deferred["status"] == "deferred"
    assert deferred["agenda_outcome"]["reason"].startswith("Needs a product decision")
    third = record_data(d, seeded["record_ids"][2])
    assert third["status"] == "done"
    assert third["agenda_outcome"]["conclusion"].startswith("Split auth into session")

    again = d.ok("agenda_sync_records", d.mine())
    assert all(r.get("earlier_sync") for r in again["sync"]["results"])
    health = d.ok("agenda_view", {"agenda_id": agenda_id, "view": "health"})
    assert health["healthy"], health["problems"]
    return {"closure": closure, "synced": synced}
