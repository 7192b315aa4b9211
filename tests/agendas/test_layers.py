"""Layers and conclusions: nesting, numbering, returning, and every revision kept."""

from __future__ import annotations

from tests.agendas.helpers import driver, started
from workflow.models.agendas import AgendaItem


def open_layer(d, kind: str, items: list[str]) -> dict:
    result = d.ok("agenda_open_layer", d.mine(kind=kind, items=items, source_reference="chat"))
    d.acknowledge(result)
    return result


def test_nested_children_number_from_their_parent_and_next_stays_in_the_deepest(db):
    d = driver()
    started(d)
    d.step("complete", "Renamed.")
    d.step("next")
    open_layer(d, "child", ["CI matrix", "classifiers"])
    nested = open_layer(d, "child", ["3.10 jobs", "3.11 jobs"])
    assert nested["current_item"]["number"] == "2.1.1"
    d.step("complete", "Dropped.")
    assert d.step("next")["current_item"]["number"] == "2.1.2"
    d.step("complete", "Kept.")
    back = d.ok("agenda_return", d.mine(outcome="Matrix is 3.11 only."))
    assert back["current_item"]["number"] == "2.1" and back["current_item"]["awaiting_synthesis"]
    text = back["whole_picture"]["text"]
    # The finished list is folded to one line with its outcome; its items are in returned_from.
    assert "Child list 2.1 [closed: 2 completed] — Outcome: Matrix is 3.11 only." in text
    assert "2.1.1." not in text and back["whole_picture"]["folded"] == ["2.1"]
    assert back["returned_from"]["items"] == [
        "2.1.1. [completed] 3.10 jobs — Dropped.",
        "2.1.2. [completed] 3.11 jobs — Kept.",
    ]
    unfolded = d.ok("agenda_view", {"agenda_id": d.agenda_id, "unfold_layer": "2.1"})
    assert "2.1.1. [completed] 3.10 jobs — Dropped." in unfolded["whole_picture"]["text"]
    assert "folded" not in unfolded["whole_picture"]
    d.refused("agenda_view", {"agenda_id": d.agenda_id, "unfold_layer": "7"}, "INVALID_INPUT")
    d.refused("agenda_view", {"unfold_layer": "2.1"}, "INVALID_INPUT")


def test_an_interruption_returns_to_the_same_item_without_synthesis(db):
    d = driver()
    started(d)
    interruption = open_layer(d, "interruption", ["Prod is down"])
    assert interruption["layer"]["kind"] == "interruption"
    assert interruption["current_item"]["number"] == "i1.1"
    d.step("complete", "Restarted the worker.")
    back = d.ok("agenda_return", d.mine(outcome="Prod is back."))
    d.acknowledge(back)
    assert back["current_item"] == {
        "number": "1",
        "text": "Rename the settings module",
        "state": "current",
    }
    d.step("complete", "Renamed.")  # no synthesis needed after an interruption
    second = open_layer(d, "interruption", ["Another fire"])
    assert second["current_item"]["number"] == "i2.1"


def test_every_conclusion_revision_is_kept(db):
    d = driver()
    started(d)
    d.step("complete", "First take.")
    d.step("next")
    d.step("complete", "Dropped 3.10.")
    d.step("revise", "Second take.", item_number=1)
    d.step("revise", "Dropped 3.10 and 3.9.")
    item1 = AgendaItem.objects.get(layer__depth=0, number=1)
    assert item1.conclusion == "Second take."
    assert list(item1.conclusions.values_list("kind", "text")) == [
        ("conclusion", "First take."),
        ("revision", "Second take."),
    ]
    health = d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})
    assert health["healthy"], health["problems"]


def test_the_list_view_puts_open_agendas_first(db):
    d = driver()
    started(d)
    d.ok("agenda_control", d.mine(action="abandon", text="dropped"))
    started(d)
    listed = d.ok("agenda_view", {})
    assert [a["status"] for a in listed["agendas"]] == ["active", "abandoned"]
    d.refused("agenda_view", {"view": "health"}, "INVALID_INPUT")
