"""Replies stay small: a 100-item agenda with a 100-item child list answers every call in
under 16 KB (the JSON text the client receives), because finished lists fold to one line and
previews shrink to fit; the whole list stays one call away (unfold_layer, the admin)."""

from __future__ import annotations

from typing import Any

from tests.agendas.driver import Driver
from tests.agendas.helpers import database_snapshot
from tests.mcp_client import call_tool_raw

REPLY_LIMIT = 16 * 1024
FINDINGS = [
    f"Finding {n}: the uploader retries without back-off when the storage API answers 503"
    for n in range(1, 101)
]
QUESTIONS = [f"Question {n}: which callers still read the legacy token header?" for n in range(100)]


class Measured:
    """Calls the tools in process and keeps the size of every reply's JSON text."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.largest = 0

    def __call__(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = call_tool_raw(name, arguments)
        size = len(result.content[0].text.encode())
        self.largest = max(self.largest, size)
        self.sizes.setdefault(name, 0)
        self.sizes[name] = max(self.sizes[name], size)
        return result.structuredContent


def test_every_reply_of_a_100_item_agenda_with_a_100_item_child_list_is_small(db):
    measured = Measured()
    d = Driver(measured, snapshot=database_snapshot)
    start = d.ok("agenda_start", {"title": "Review", "items": FINDINGS, "source_reference": "PR"})
    assert measured.sizes["agenda_start"] < REPLY_LIMIT
    assert FINDINGS[99] in start["whole_picture"]["text"]  # every item, in full here
    d.acknowledge(start)
    d.step("complete", "Back-off added with jitter.")
    d.step("next")
    child = d.ok(
        "agenda_open_layer", d.mine(kind="child", items=QUESTIONS, source_reference="notes")
    )
    d.acknowledge(child)
    for number in range(1, 101):
        d.step("complete", f"Caller {number} moves to the new header.")
        if number < 100:
            d.step("next")
    returned = d.ok("agenda_return", d.mine(outcome="Every caller moves to the new header."))
    assert measured.sizes["agenda_return"] < REPLY_LIMIT, measured.sizes
    picture = returned["whole_picture"]
    assert "Child list 2 [closed: 100 completed] — Outcome: Every caller moves" in picture["text"]
    assert picture["folded"] == ["2"] and "2.1." not in picture["text"]
    assert returned["returned_from"]["counts"] == "100 completed"
    assert returned["returned_from"]["items"][0].startswith("2.1. [completed] Question 0")
    d.acknowledge(returned)
    d.step("revise", "Back-off added; callers move to the new header.")
    view = d.ok("agenda_view", {"agenda_id": d.agenda_id})
    assert "2.100. [completed]" not in view["whole_picture"]["text"]
    unfolded = d.ok("agenda_view", {"agenda_id": d.agenda_id, "unfold_layer": "2"})
    assert "2.100. [completed]" in unfolded["whole_picture"]["text"]
    assert measured.largest < REPLY_LIMIT, measured.sizes


def test_a_reply_stays_small_even_with_the_longest_items(db):
    measured = Measured()
    d = Driver(measured)
    long_items = [f"{n} " + "very long item text " * 99 for n in range(100)]
    start = d.ok("agenda_start", {"title": "Long", "items": long_items, "source_reference": "x"})
    assert measured.largest < REPLY_LIMIT, measured.sizes
    assert start["whole_picture"]["preview_chars"] < 160  # shortened to fit, and says so
    assert start["current_item"]["text"] == long_items[0].strip()  # always whole
    d.acknowledge(start)
    d.step("defer", "Because " + "a long reason " * 140)
    closed = d.ok("agenda_control", d.mine(action="abandon", text="Out of time."))
    closure = closed["closure"]
    assert len(closure["unresolved"]) + closure["unresolved_not_listed"] == 100
    assert closure["unresolved_not_listed"] > 0
    d.ok("agenda_view", {"agenda_id": d.agenda_id})
    assert measured.largest < REPLY_LIMIT, measured.sizes
