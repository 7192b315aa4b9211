"""A deferred or blocked item can be taken up again and concluded later in the same agenda."""

from __future__ import annotations

from tests.agendas.helpers import driver, started
from workflow.models.agendas import AgendaItem


def test_a_deferred_item_is_revisited_and_completed(db):
    d = driver()
    started(d)
    d.step("defer", "Waiting on the platform team.")
    d.refused("agenda_step", d.mine(action="complete", text="x"), "AGENDA_ORDER")
    d.step("next")
    # The current item must be resolved first; revisit names an item and takes no text.
    d.refused("agenda_step", d.mine(action="revisit", item_number=1), "AGENDA_ORDER")
    d.step("complete", "Dropped 3.10.")
    d.refused("agenda_step", d.mine(action="revisit"), "INVALID_INPUT")
    d.refused("agenda_step", d.mine(action="revisit", item_number=1, text="x"), "INVALID_INPUT")
    d.refused("agenda_step", d.mine(action="revisit", item_number=2), "AGENDA_ORDER")
    d.refused("agenda_step", d.mine(action="revisit", item_number=3), "AGENDA_ORDER")  # open
    d.refused("agenda_step", d.mine(action="revisit", item_number=9), "INVALID_INPUT")

    back = d.step("revisit", item_number=1)
    assert back["current_item"]["number"] == "1"
    assert back["current_item"]["state"] == "current"
    assert "Discuss item 1" in back["next_step"]
    picture = d.ok("agenda_view", {"agenda_id": d.agenda_id})["whole_picture"]["text"]
    assert "▶ 1. [current] Rename the settings module" in picture
    done = d.step("complete", "Renamed once the platform team agreed.")
    assert done["current_item"] == {
        "number": "1",
        "text": "Rename the settings module",
        "state": "completed",
        "conclusion": "Renamed once the platform team agreed.",
    }
    assert d.step("next")["current_item"]["number"] == "3"  # the open item, in order
    item1 = AgendaItem.objects.get(layer__agenda_id=d.agenda_id, number=1)
    assert list(item1.conclusions.values_list("kind", "text")) == [
        ("deferred", "Waiting on the platform team."),
        ("conclusion", "Renamed once the platform team agreed."),
    ]
    d.step("block", "Needs the SDK release.")
    d.step("revisit", item_number=3)
    d.step("defer", "Next sprint.")
    closed = d.ok("agenda_control", d.mine(action="finish", text="Two done, one deferred."))
    assert [(u["number"], u["reason"]) for u in closed["closure"]["unresolved"]] == [
        ("3", "Next sprint.")
    ]
    health = d.ok("agenda_view", {"agenda_id": d.agenda_id, "view": "health"})
    assert health["healthy"], health["problems"]


def test_revisit_works_in_the_deepest_list_only(db):
    d = driver()
    started(d)
    d.step("defer", "Later.")
    d.step("next")
    child = d.ok(
        "agenda_open_layer", d.mine(kind="child", items=["a", "b"], source_reference="notes")
    )
    d.acknowledge(child)
    d.step("defer", "a later")
    d.step("next")
    d.step("complete", "b done")
    assert d.step("revisit", item_number=1)["current_item"]["number"] == "2.1"
    d.step("complete", "a done after all")
    returned = d.ok("agenda_return", d.mine(outcome="Both done."))
    assert returned["returned_from"]["counts"] == "2 completed"
