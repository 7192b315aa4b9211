"""Read tools through the real MCP server in process: schemas, envelopes and workspace scope."""

from __future__ import annotations

import pytest

from tests.conftest import OTHER_WORKSPACE, make_collection, make_record
from tests.mcp_client import call_tool, call_tool_raw, list_tools

READ_TOOLS = {
    "list_collections",
    "get_record_context",
    "get_record_history",
    "get_collection_history",
    "search_records",
    "traverse",
    "aggregate",
}


@pytest.fixture
def tools(db):
    return {tool.name: tool for tool in list_tools() if tool.name in READ_TOOLS}


def test_read_tools_are_listed_with_every_parameter_described(tools):
    assert set(tools) == READ_TOOLS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 80, name
        for parameter, schema in tool.inputSchema.get("properties", {}).items():
            assert schema.get("description"), f"{name}.{parameter} has no description"
        assert "workspace" not in tool.inputSchema.get("properties", {}), name
        assert "actor" not in str(tool.inputSchema.get("properties", {})), name
        # One envelope for every tool, said in the README and instructions, not per tool.
        assert tool.outputSchema is None, name


def test_search_records_limits_are_in_the_schema(tools):
    limit = tools["search_records"].inputSchema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 20)


def test_list_collections_returns_an_ok_envelope(hiring):
    envelope = call_tool("list_collections")
    assert envelope["ok"] is True
    names = [c["name"] for c in envelope["result"]["collections"]]
    assert names == ["applications", "feedback", "interviews", "openings", "people"]


def test_get_record_context_and_history_through_mcp(hiring):
    envelope = call_tool(
        "get_record_context", {"record_id": hiring.kirat_backend.pk, "event_limit": 0}
    )
    assert envelope["ok"] is True
    assert envelope["result"]["record"]["title"] == "Kirat - Junior Backend"
    assert envelope["result"]["events_omitted"] is True
    history = call_tool("get_record_history", {"record_id": hiring.kirat.pk, "limit": 1})
    assert history["ok"] is True and history["result"]["events"][0]["kind"] == "record.created"
    collection = call_tool("get_collection_history", {"collection_id": hiring.people.pk})
    assert collection["result"]["events"][0]["kind"] == "collection.created"


def test_search_records_through_mcp_pages_with_cursor(hiring):
    first = call_tool("search_records", {"collection_id": hiring.people.pk, "limit": 2})
    assert first["ok"] is True and first["result"]["has_more"] is True
    second = call_tool(
        "search_records",
        {"collection_id": hiring.people.pk, "limit": 2, "cursor": first["result"]["next_cursor"]},
    )
    seen = [r["title"] for r in first["result"]["records"] + second["result"]["records"]]
    assert seen == ["Kirat", "Abhishek", "Rahul", "Rahul"]


def test_bad_input_is_an_error_envelope_naming_the_field(hiring):
    envelope = call_tool("search_records", {"filters": {"n": 1}, "cursor": "garbage"})
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "INVALID_INPUT"
    assert "cursor" in envelope["error"]["message"]
    missing = call_tool("get_record_context", {"record_id": "not-an-id"})
    assert missing["error"]["code"] == "INVALID_INPUT"


def test_schema_violations_are_envelope_refusals_naming_the_field(hiring):
    result = call_tool_raw("search_records", {"limit": 500})
    assert result.isError is True
    error = result.structuredContent["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "limit"
    assert "at most 100" in error["message"] and "500" in error["message"]


def test_tools_read_only_the_configured_workspace(hiring, other_ctx, settings):
    theirs = make_collection(other_ctx, "people")
    other_kirat = make_record(other_ctx, theirs, "Kirat", team="other")
    foreign_calls = [
        ("get_record_context", {"record_id": other_kirat.pk}),
        ("get_record_history", {"record_id": other_kirat.pk}),
        ("get_collection_history", {"collection_id": theirs.pk}),
        ("search_records", {"collection_id": theirs.pk}),
        ("traverse", {"start_record_id": other_kirat.pk}),
        ("aggregate", {"collection_id": theirs.pk}),
    ]
    for name, arguments in foreign_calls:
        assert call_tool(name, arguments)["error"]["code"] == "NOT_FOUND", name
    found = call_tool("search_records", {"query": "kirat"})["result"]["records"]
    assert other_kirat.pk not in [r["record_id"] for r in found]
    listed = call_tool("list_collections")["result"]["collections"]
    assert theirs.pk not in [c["collection_id"] for c in listed]

    settings.ANCHOR_WORKSPACE_ID = OTHER_WORKSPACE
    mine = [
        ("get_record_context", {"record_id": hiring.kirat.pk}),
        ("get_record_history", {"record_id": hiring.kirat.pk}),
        ("get_collection_history", {"collection_id": hiring.people.pk}),
        ("search_records", {"collection_id": hiring.people.pk}),
        ("traverse", {"start_record_id": hiring.kirat.pk}),
        ("aggregate", {"collection_id": hiring.people.pk}),
    ]
    for name, arguments in mine:
        assert call_tool(name, arguments)["error"]["code"] == "NOT_FOUND", name
    found = call_tool("search_records", {"text": "kirat"})["result"]["records"]
    assert [r["record_id"] for r in found] == [other_kirat.pk]
    listed = call_tool("list_collections")["result"]["collections"]
    assert [c["collection_id"] for c in listed] == [theirs.pk]


def test_traverse_and_aggregate_through_mcp(hiring):
    walk = call_tool("traverse", {"start_record_id": hiring.kirat.pk, "max_depth": 3})
    assert walk["ok"] is True
    titles = {r["title"] for r in walk["result"]["records"]}
    assert {"Kirat - Junior Backend", "Junior Backend", "Kirat backend coding interview"} <= titles
    totals = call_tool("aggregate", {"group_by": {"collection": True}})
    assert totals["ok"] is True
    counts = {g["collection_name"]: g["count"] for g in totals["result"]["groups"]}
    assert counts["people"] == 4 and totals["result"]["matched"] == 10


def test_traverse_direction_is_validated_by_the_schema(hiring):
    result = call_tool_raw("traverse", {"start_record_id": hiring.kirat.pk, "direction": "up"})
    assert result.isError is True
    error = result.structuredContent["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "direction"
