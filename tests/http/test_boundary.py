"""The MCP boundary over HTTP: raw bodies no official client sends, refused the way stdio
refuses them, with nothing written; JSON-RPC rules; Anchor's own version in serverInfo."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings

from records.models import Collection
from records.services import WriteContext, workspace_ensure
from tests.conftest import make_collection
from tests.http.conftest import MCP_URL, McpHttp, no_writes

MAX_ERROR_BYTES = 8 * 1024


@pytest.fixture
def session(alice) -> McpHttp:
    connection = alice.connect()
    connection.initialize()
    connection.ok("list_collections")  # the token's last-used stamp is written now, not later
    return connection


@pytest.fixture
def people(alice) -> Collection:
    workspace_ensure("team-a")
    ctx = WriteContext(workspace_id="team-a", actor_id="user:alice", decision_reason="set-up")
    return make_collection(ctx, "people")


def post_raw(connection: McpHttp, body: str) -> Any:
    return connection.client.generic(
        "POST",
        MCP_URL,
        data=body.encode("utf-8", "surrogatepass"),
        content_type="application/json",
        headers=connection.headers(),
    )


def call_line(name: str, arguments_json: str, request_id: int = 99) -> str:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{name}", "arguments": {arguments_json}}}}}'
    )


def refused_envelope(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    assert len(response.content) < MAX_ERROR_BYTES, f"{len(response.content)} bytes"
    result = response.json()["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]["error"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_invalid_input_naming_the_field(session, people, token):
    with no_writes():
        response = post_raw(
            session,
            call_line(
                "prepare_write",
                json.dumps(
                    {
                        "operation": "create_record",
                        "arguments": {"collection_id": people.pk, "title": "Zed", "data": {}},
                        "review_ids": ["x"],
                        "decision_reason": "r",
                    }
                ).replace('"data": {}', f'"data": {{"score": {token}}}'),
            ),
        )
    error = refused_envelope(response)
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "arguments.data.score"


def test_a_lone_surrogate_is_invalid_input_not_a_storage_error(session):
    with no_writes():
        response = post_raw(session, call_line("search_records", '{"query": "bad \\ud800 x"}'))
    error = refused_envelope(response)
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "query"


def test_deep_nesting_is_a_400_with_a_json_rpc_error(session):
    deep = "[" * 10_000 + "]" * 10_000
    with no_writes():
        response = post_raw(session, call_line("search_records", f'{{"filters": {{"a": {deep}}}}}'))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert "nests too deeply" in response.json()["error"]["message"]


def test_a_message_with_too_many_members_is_refused_before_it_is_parsed(session):
    keys = json.dumps({f"k{index}": 0 for index in range(200_000)})
    with no_writes():
        response = post_raw(session, call_line("search_records", f'{{"filters": {keys}}}'))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600 and "more than 50000 members" in error["message"], error
    assert len(response.content) < MAX_ERROR_BYTES


def test_the_same_bytes_in_strings_are_not_counted_as_members(session):
    # As many commas, colons and brackets as the refused message, all inside one string.
    text = json.dumps({f"k{index}": [0] for index in range(200_000)})
    found = session.call("search_records", {"query": text[:2000], "collection_id": text})
    assert found["ok"] is False and found["error"]["code"] == "INVALID_INPUT", found
    assert found["error"]["details"]["field"] == "collection_id", found


def test_a_large_wrongly_typed_array_gets_a_small_refusal(session):
    items = ",".join(['{"x": 1}'] * 20_000)
    response = post_raw(
        session,
        call_line(
            "prepare_write",
            '{"operation": "create_record", "arguments": {}, '
            f'"review_ids": [{items}], "decision_reason": "r"}}',
        ),
    )
    error = refused_envelope(response)
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"].startswith("review_ids")


def test_string_arguments_stay_strings(session):
    found = session.call("search_records", {"query": "null"})
    assert found["ok"] is True and found["result"]["records"] == []
    widened = session.call("search_records", {"collection_id": "null"})
    assert widened["ok"] is False and widened["error"]["code"] == "INVALID_INPUT"


def test_unknown_method_is_method_not_found(session):
    response = session.request("no/such/method")
    assert response.json()["error"]["code"] == -32601
    assert response.json()["id"] == session.next_id - 1


@pytest.mark.parametrize(
    "method, params",
    [("resources/read", {"uri": "anchor://nothing"}), ("prompts/get", {"name": "none"})],
)
def test_unknown_resource_or_prompt_is_invalid_params(session, method, params):
    body = response_json(session.request(method, params))
    assert body["error"]["code"] == -32602 and body["error"]["message"]


def test_server_info_names_anchor_and_its_version(alice):
    connection = alice.connect()
    info = connection.initialize()
    assert info["serverInfo"]["name"] == "anchor"
    assert info["serverInfo"]["version"] == settings.ANCHOR_VERSION != "1.30.0"


def test_a_second_initialize_in_a_session_is_refused(session):
    response = session.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x"}},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_a_null_id_is_an_invalid_request(session):
    response = session.post({"jsonrpc": "2.0", "id": None, "method": "ping"})
    assert response.status_code == 400
    body = response.json()
    assert body["id"] is None and body["error"]["code"] == -32600


def response_json(response: Any) -> dict[str, Any]:
    """The JSON-RPC message of a reply, sent as plain JSON or as one SSE event."""
    text = response.content.decode()
    if response["Content-Type"].startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return json.loads(text)
