"""Prompts for the everyday starts, and collections and records as resources, scoped like tools."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from asgiref.sync import async_to_sync
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from records import selectors
from tests.conftest import WORKSPACE, make_collection, make_record
from workflow.mcp import sdk


def session_call(method: str, *args: Any) -> Any:
    async def run() -> Any:
        server = sdk.lowlevel_server()
        async with create_connected_server_and_client_session(server) as session:
            return await getattr(session, method)(*args)

    sdk.REQUEST_CONTEXT.set(SimpleNamespace())
    return async_to_sync(run)()


def session_error(method: str, *args: Any) -> Any:
    """The JSON-RPC error the server answered (raised inside the session, caught there)."""

    async def run() -> Any:
        server = sdk.lowlevel_server()
        async with create_connected_server_and_client_session(server) as session:
            try:
                await getattr(session, method)(*args)
            except McpError as exc:
                return exc.error
        raise AssertionError(f"{method}{args} was not refused")

    sdk.REQUEST_CONTEXT.set(SimpleNamespace())
    return async_to_sync(run)()


def test_prompts_are_listed_and_filled_in(db):
    listed = {p.name: p for p in session_call("list_prompts").prompts}
    assert {"catch_up", "work_through_list", "remember"} <= set(listed)
    assert all(p.title and p.description for p in listed.values())
    got = session_call("get_prompt", "work_through_list", {"items": "1. Alpha\n2. Beta"})
    text = got.messages[0].content.text
    assert "agenda_start" in text and "1. Alpha\n2. Beta" in text


def test_a_prompt_missing_its_argument_or_unknown_is_invalid_params(db):
    cases: list[tuple[str, dict[str, str] | None]] = [("work_through_list", {}), ("no-such", None)]
    for name, arguments in cases:
        error = session_error("get_prompt", name, arguments)
        assert error.code == -32602 and error.message


def test_records_and_collections_read_as_resources(hiring):
    templates = session_call("list_resource_templates").resourceTemplates
    assert {t.uriTemplate for t in templates} == {
        "anchor://records/{record_id}",
        "anchor://collections/{collection_id}",
    }
    listed = {str(r.uri) for r in session_call("list_resources").resources}
    assert f"anchor://collections/{hiring.people.pk}" in listed

    record = session_call("read_resource", f"anchor://records/{hiring.kirat.pk}")
    body = json.loads(record.contents[0].text)
    assert body["record"]["title"] == "Kirat" and record.contents[0].mimeType == "application/json"

    people = session_call("read_resource", f"anchor://collections/{hiring.people.pk}")
    body = json.loads(people.contents[0].text)
    assert body["collection"]["name"] == "people"
    assert "Kirat" in {r["title"] for r in body["records"]}


def test_resources_never_reach_another_workspace(hiring, other_ctx):
    theirs = make_collection(other_ctx, "people")
    their_kirat = make_record(other_ctx, theirs, "Kirat", team="other")
    listed = {str(r.uri) for r in session_call("list_resources").resources}
    assert f"anchor://collections/{theirs.pk}" not in listed
    for uri in (f"anchor://records/{their_kirat.pk}", f"anchor://collections/{theirs.pk}"):
        error = session_error("read_resource", uri)
        assert error.code == -32602 and "no " in error.message.lower()


def test_a_collection_reads_as_its_catalog_entry_and_a_missing_one_names_the_uri(hiring):
    people = session_call("read_resource", f"anchor://collections/{hiring.people.pk}")
    listed = selectors.collection_list(workspace_id=WORKSPACE)["collections"]
    assert json.loads(people.contents[0].text)["collection"] in listed
    error = session_error("read_resource", "anchor://collections/nope")
    assert error.code == -32602
    assert error.message.startswith("uri: no collection with ID 'nope' in this workspace.")
    assert "list_collections" in error.message  # where collection IDs come from
