"""Scope comes from the token's user and membership: no tool reaches another workspace.

Alice works in team-a (Kirat's hiring), Bob in team-b (Rahul's); Carol is in both and names one
per request with X-Anchor-Workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from records.models import AuditEvent, Record
from records.services import WriteContext
from tests.conftest import make_collection, make_record
from tests.http.conftest import McpHttp, Member, no_writes
from workflow.models import PreparedAction, ReviewTicket


@dataclass
class Seeded:
    people_a: str
    kirat: str
    people_b: str
    rahul: str


@pytest.fixture
def seeded(alice, bob, carol) -> Seeded:
    ctx_a = WriteContext(workspace_id="team-a", actor_id="seed", decision_reason="seed")
    ctx_b = WriteContext(workspace_id="team-b", actor_id="seed", decision_reason="seed")
    people_a = make_collection(ctx_a, "people", "People we hire in team A")
    people_b = make_collection(ctx_b, "people", "People we hire in team B")
    kirat = make_record(ctx_a, people_a, "Kirat", city="Pune")
    rahul = make_record(ctx_b, people_b, "Rahul", city="Delhi")
    return Seeded(people_a.pk, kirat.pk, people_b.pk, rahul.pk)


def titles(connection: McpHttp, **arguments) -> list[str]:
    result = connection.ok("search_records", arguments)
    return sorted(item["title"] for item in result["records"])


def prepare_update(connection: McpHttp, record_id: str, review_id: str, city: str) -> dict:
    return connection.call(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": record_id, "changes": {"city": city}, "expected_version": 1},
            "review_ids": [review_id],
            "decision_reason": "the user asked",
        },
    )


def test_each_user_sees_only_their_workspace(seeded, alice: Member, bob: Member):
    a, b = alice.connect(), bob.connect()
    assert titles(a) == ["Kirat"]
    assert titles(b) == ["Rahul"]
    assert titles(a, text="Rahul") == []
    assert titles(b, query="Kirat") == []
    collections = a.ok("list_collections")["collections"]
    assert [c["collection_id"] for c in collections] == [seeded.people_a]


def test_another_workspaces_record_cannot_be_read_or_resolved(seeded, alice: Member):
    a = alice.connect()
    a.refused("get_record_context", {"record_id": seeded.rahul}, "NOT_FOUND")
    by_id = a.ok("resolve_record", {"query": seeded.rahul})
    assert by_id["status"] == "no_match" and "selected_record_id" not in by_id
    by_name = a.ok("resolve_record", {"query": "Rahul"})
    assert by_name["status"] == "no_match"
    assert a.ok("get_record_context", {"record_id": seeded.kirat})["record"]["title"] == "Kirat"


def test_another_users_tickets_and_actions_do_not_exist(seeded, alice: Member, bob: Member):
    a, b = alice.connect(), bob.connect()
    review = a.ok("resolve_record", {"query": "Kirat", "collection_id": seeded.people_a})
    assert review["status"] == "resolved"
    prepared = prepare_update(a, seeded.kirat, review["resolution_id"], "Mumbai")
    assert prepared["ok"], prepared
    action_id = prepared["result"]["action_id"]

    # Bob cites Alice's review to write Alice's record, and commits Alice's action.
    b.refused("commit_write", {"action_id": action_id}, "NOT_FOUND")
    stolen = prepare_update(b, seeded.kirat, review["resolution_id"], "Delhi")
    assert not stolen["ok"] and stolen["error"]["code"] == "NOT_FOUND", stolen
    assert Record.objects.get(pk=seeded.kirat).data["city"] == "Pune"
    assert PreparedAction.objects.get(pk=action_id).state == "prepared"

    # Alice's own commit still goes through, audited as her in her workspace.
    committed = a.ok("commit_write", {"action_id": action_id})
    assert committed["status"] == "committed"
    event = AuditEvent.objects.get(record_id=seeded.kirat, kind="record.updated")
    assert (event.workspace_id, event.actor_id) == ("team-a", "user:alice")
    ticket = ReviewTicket.objects.get(pk=review["resolution_id"])
    assert (ticket.workspace_id, ticket.actor_id) == ("team-a", "user:alice")


def test_a_user_in_both_workspaces_chooses_per_request(seeded, carol: Member):
    in_a, in_b = carol.connect("team-a"), carol.connect("team-b")
    assert titles(in_a) == ["Kirat"]
    assert titles(in_b) == ["Rahul"]
    # One session, the header switched between requests: the header decides, not the session.
    in_a.workspace = "team-b"
    assert titles(in_a) == ["Rahul"]
    in_a.workspace = "team-a"

    # A team-a review is no evidence in team-b, even for the same person.
    review_a = in_a.ok("resolve_record", {"query": "Kirat", "collection_id": seeded.people_a})
    crossed = prepare_update(in_b, seeded.kirat, review_a["resolution_id"], "Goa")
    assert not crossed["ok"] and crossed["error"]["code"] == "NOT_FOUND", crossed

    review_b = in_b.ok("resolve_record", {"query": "Rahul", "collection_id": seeded.people_b})
    prepared = prepare_update(in_b, seeded.rahul, review_b["resolution_id"], "Goa")
    assert prepared["ok"], prepared
    in_a.refused("commit_write", {"action_id": prepared["result"]["action_id"]}, "NOT_FOUND")
    assert in_b.ok("commit_write", {"action_id": prepared["result"]["action_id"]})["status"] == (
        "committed"
    )
    event = AuditEvent.objects.get(record_id=seeded.rahul, kind="record.updated")
    assert (event.workspace_id, event.actor_id) == ("team-b", "user:carol")


def test_scope_arguments_are_not_accepted_from_the_model(seeded, alice: Member):
    """No tool takes a workspace; an extra argument is refused, not silently honoured."""
    a = alice.connect()
    a.initialize()
    response = a.request(
        "tools/call", {"name": "search_records", "arguments": {"workspace_id": "team-b"}}
    )
    result = response.json()["result"]
    envelope = result.get("structuredContent")
    assert result.get("isError") or (envelope and not envelope["ok"]), result
    with no_writes():
        assert titles(a) == ["Kirat"]


def complete(connection: McpHttp, template: str, name: str, typed: str) -> dict:
    if connection.session_id is None:
        connection.initialize()
    response = connection.request(
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": template},
            "argument": {"name": name, "value": typed},
        },
    )
    assert response.status_code == 200, response.content
    return response.json()["result"]["completion"]


def test_resource_pickers_offer_only_the_callers_workspace(seeded, alice: Member, bob: Member):
    a, b = alice.connect(), bob.connect()
    records = "anchor://records/{record_id}"
    collections = "anchor://collections/{collection_id}"
    assert complete(a, records, "record_id", "kir")["values"] == [seeded.kirat]
    assert complete(b, records, "record_id", "kir")["values"] == []
    assert complete(b, records, "record_id", "ra")["values"] == [seeded.rahul]
    assert complete(b, records, "record_id", seeded.kirat)["values"] == []
    assert complete(a, collections, "collection_id", "peo")["values"] == [seeded.people_a]
    assert complete(b, collections, "collection_id", "peo")["values"] == [seeded.people_b]
