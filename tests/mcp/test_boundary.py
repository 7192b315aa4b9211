"""The MCP boundary, through the real server object: arguments arrive exactly as sent, every
refusal is a bounded INVALID_INPUT envelope naming the field, isError follows ok, and every
query is bounded in time. (NaN, Infinity and deep nesting cannot pass the in-process client's
serialiser; tests/reliability/test_boundary_stdio.py and tests/http/test_boundary.py send them.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection, transaction
from mcp.shared.exceptions import McpError

from records.models import AuditEvent, Record
from tests.conftest import make_record
from tests.mcp_client import call_tool, call_tool_raw
from workflow.models import PreparedAction

MAX_ERROR_BYTES = 8 * 1024


def refusal(name: str, arguments: dict) -> dict:
    result = call_tool_raw(name, arguments)
    assert result.isError is True, result
    error = result.structuredContent["error"]
    size = len(json.dumps(result.structuredContent)) + len(result.content[0].text)
    assert size < MAX_ERROR_BYTES, f"{name}: error reply is {size} bytes"
    for leaked in ("pydantic", "validation error", "Traceback", "input_value", "errors.pydantic"):
        assert leaked not in error["message"], error["message"]
    return error


def written() -> tuple[int, int, int]:
    return Record.objects.count(), PreparedAction.objects.count(), AuditEvent.objects.count()


# --- strings stay strings --------------------------------------------------------------------


@pytest.mark.parametrize("literal", ["null", "true", "42", "[1]", '{"a": 1}'])
def test_string_arguments_are_never_parsed_as_json(hiring, ctx, literal):
    titled = make_record(ctx, hiring.people, f"{literal} Intro")
    found = call_tool("search_records", {"query": literal, "collection_id": hiring.people.pk})
    assert found["ok"] is True, found
    assert [r["record_id"] for r in found["result"]["records"]] == [titled.pk]


def test_null_text_searches_for_the_word_not_for_everything(hiring):
    found = call_tool("search_records", {"text": "null"})
    assert found["ok"] is True and found["result"]["records"] == []


@pytest.mark.parametrize("tool", ["search_records", "traverse", "aggregate"])
def test_a_malformed_id_is_refused_never_widened(hiring, tool):
    by_tool: dict[str, dict[str, Any]] = {
        "search_records": {"collection_id": "null"},
        "traverse": {"start_record_id": "null"},
        "aggregate": {"collection_id": "null", "metrics": [{"op": "count"}]},
    }
    arguments = by_tool[tool]
    error = refusal(tool, arguments)
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] in arguments


# --- refusals name the field -----------------------------------------------------------------


def test_a_misspelt_argument_gets_did_you_mean(hiring):
    error = refusal("search_records", {"colection_id": hiring.people.pk})
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "colection_id"
    assert "did you mean `collection_id`?" in error["message"].lower()


def test_a_missing_argument_names_it(hiring):
    error = refusal("resolve_record", {})
    assert error["details"]["field"] == "query" and "missing" in error["message"]


def test_a_wrong_type_names_the_field_and_the_type(hiring):
    error = refusal("search_records", {"limit": "5"})
    assert error["details"]["field"] == "limit"
    assert "an integer" in error["message"] and '"5"' in error["message"]


def test_a_huge_wrongly_typed_array_gets_a_small_reply(hiring):
    before = written()
    error = refusal(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {},
            "review_ids": list(range(1_000_000)),
            "decision_reason": "r",
        },
    )
    assert error["details"]["field"].startswith("review_ids")
    assert written() == before


def test_lone_surrogates_are_refused_naming_the_field(hiring):
    error = refusal("search_records", {"query": "bad \ud800 text"})
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "query"
    assert "surrogate" in error["message"]


def test_unknown_tool_is_json_rpc_invalid_params_with_a_suggestion(hiring):
    with pytest.raises(ExceptionGroup) as raised:
        call_tool_raw("search_record", {})
    refused = raised.value.exceptions[0]
    while isinstance(refused, ExceptionGroup):
        refused = refused.exceptions[0]
    assert isinstance(refused, McpError)
    assert refused.error.code == -32602
    assert "`search_records`" in refused.error.message


def test_is_error_follows_ok(hiring):
    fine = call_tool_raw("list_collections", {})
    assert fine.isError is False and fine.structuredContent["ok"] is True
    missing = call_tool_raw("get_record_context", {"record_id": "not-an-id"})
    assert missing.isError is True and missing.structuredContent["ok"] is False


# --- every query bounded in time -------------------------------------------------------------


def slow_sql() -> str:
    if connection.vendor == "postgresql":
        return "SELECT pg_sleep(5)"
    return (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 200000000) "
        "SELECT count(*) FROM n"
    )


def test_a_query_past_the_time_limit_is_stopped_with_query_timeout(hiring, settings, monkeypatch):
    import workflow.mcp.tools.reads as read_tools

    def slow_digest(scope, agenda_tools):
        # A savepoint, as a write's atomic block gives: the test's own transaction survives.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(slow_sql())
        raise AssertionError("the slow query should have been stopped")

    settings.ANCHOR_QUERY_TIMEOUT_S = 0.2
    monkeypatch.setattr(read_tools, "workspace_digest", slow_digest)
    result = call_tool_raw("workspace_digest", {})
    assert result.isError is True
    error = result.structuredContent["error"]
    assert error["code"] == "QUERY_TIMEOUT", error
    assert "0.2 s" in error["message"]
    # The connection is still usable afterwards, and the default bound is back.
    settings.ANCHOR_QUERY_TIMEOUT_S = 10
    monkeypatch.undo()
    assert call_tool("workspace_digest", {})["ok"] is True


def test_the_widest_allowed_where_answers_within_the_bound(hiring):
    conditions = [
        {"field": [f"f{index}"], "op": "in", "value": [f"v{n}" for n in range(100)]}
        for index in range(20)
    ]
    found = call_tool("search_records", {"where": conditions})
    assert found["ok"] is True and found["result"]["records"] == []
    too_many = refusal("search_records", {"where": [*conditions, conditions[0]]})
    assert too_many["details"]["field"] == "where" and "20" in too_many["message"]


def test_a_dotted_field_suggests_the_list_of_keys(hiring):
    error = refusal("search_records", {"where": [{"field": "offer.ctc", "op": "gte", "value": 30}]})
    assert error["details"]["field"] == "where[0].field"
    assert '["offer", "ctc"]' in error["message"]
