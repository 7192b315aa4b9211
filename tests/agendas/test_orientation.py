"""A new conversation finds open and paused agendas in workspace_digest, and is told to look."""

from __future__ import annotations

from tests.agendas.helpers import driver, started
from workflow.mcp.instructions import SERVER_INSTRUCTIONS


def test_the_digest_lists_open_and_paused_agendas_with_where_they_stand(db):
    d = driver()
    assert "open_agendas" not in d.ok("workspace_digest")
    started(d, ["Finished thing"])
    d.step("complete", "Done.")
    d.ok("agenda_control", d.mine(action="finish", text="All done."))
    started(d)
    d.step("complete", "Renamed.")
    d.step("next")
    d.ok("agenda_control", d.mine(action="pause", text="Lunch."))
    paused_id = d.agenda_id
    fresh = d.ok("agenda_start", {"title": "Triage", "items": ["Bug A"], "source_reference": "x"})

    digest = d.ok("workspace_digest")
    assert "open_agendas_truncated" not in digest  # said only when true
    assert digest["open_agendas"] == [
        {
            "agenda_id": fresh["agenda_id"],
            "title": "Triage",
            "status": "active",
            "current_item": {"number": "1", "text": "Bug A"},
            "next_step": f"Call agenda_view agenda_id={fresh['agenda_id']} for its whole "
            "picture; show whole_picture.text to the user, then agenda_acknowledge with the "
            "presentation_id it gives.",
        },
        {
            "agenda_id": paused_id,
            "title": "Release chores",
            "status": "paused",
            "current_item": {"number": "2", "text": "Drop Python 3.10"},
            "next_step": "Paused. Call agenda_control action=resume to continue, or "
            "action=abandon.",
        },
    ]
    assert "agenda_acknowledge" in digest["open_agendas"][0]["next_step"]


def test_the_instructions_send_a_new_conversation_to_the_digest_for_agendas():
    text = " ".join(SERVER_INSTRUCTIONS.split())
    assert "Continue an open agenda from the digest with agenda_view" in text


def test_the_digest_step_for_a_picture_to_show_leads_to_the_reply_that_carries_it(db):
    """The digest carries no whole_picture: its step names the call whose reply does."""
    d = driver()
    fresh = d.ok("agenda_start", {"title": "Triage", "items": ["Bug A"], "source_reference": "x"})
    assert "whole_picture" in fresh and fresh["presentation_id"]
    digest = d.ok("workspace_digest")
    assert "whole_picture" not in digest["open_agendas"][0]
    assert digest["open_agendas"][0]["next_step"].startswith("Call agenda_view")
    view = d.ok("agenda_view", {"agenda_id": fresh["agenda_id"]})
    assert view["whole_picture"]["text"] and view["presentation_id"] == fresh["presentation_id"]
