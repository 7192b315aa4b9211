"""Raw JSON-RPC lines to a real mcp_serve: what no official client would send, refused as
INVALID_INPUT naming the field, bounded in size, with nothing written and the server serving on.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.reliability import flows
from tests.reliability.harness import RawServer, Store, running

pytestmark = pytest.mark.django_db(transaction=True)

MAX_ERROR_BYTES = 8 * 1024


def raw_call(server: RawServer, name: str, arguments_json: str) -> dict:
    request_id = server.new_id()
    line = (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{name}", "arguments": {arguments_json}}}}}'
    )
    server.send_bytes(line.encode() + b"\n")
    reply = server.reply_to(request_id)
    assert len(json.dumps(reply)) < MAX_ERROR_BYTES, f"reply is {len(json.dumps(reply))} bytes"
    return reply["result"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers_in_data_are_refused_naming_the_field(
    server_env, store: Store, tmp_path, token
):
    with running(server_env, tmp_path / "server.log") as server:
        collection_id = flows.create_collection(server, f"finite-{uuid.uuid4().hex[:6]}")
        review = server.ok("resolve_record", {"query": "Zed", "collection_id": collection_id})
        prepared_before = store.value("SELECT count(*) FROM workflow_preparedaction")
        result = raw_call(
            server,
            "prepare_write",
            json.dumps(
                {
                    "operation": "create_record",
                    "arguments": {"collection_id": collection_id, "title": "Zed", "data": {}},
                    "review_ids": [review["resolution_id"]],
                    "decision_reason": "non-finite",
                }
            ).replace('"data": {}', f'"data": {{"score": {{"raw": {token}}}}}'),
        )
        assert result["isError"] is True
        error = result["structuredContent"]["error"]
        assert error["code"] == "INVALID_INPUT", error
        assert error["details"]["field"] == "arguments.data.score.raw"
        assert store.value("SELECT count(*) FROM workflow_preparedaction") == prepared_before
        assert server.ok("list_collections", {})  # still serving


def test_a_lone_surrogate_is_invalid_input(server_env, tmp_path):
    with running(server_env, tmp_path / "server.log") as server:
        result = raw_call(server, "search_records", '{"query": "bad \\ud800 text"}')
        error = result["structuredContent"]["error"]
        assert result["isError"] is True
        assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "query"


def test_deep_nesting_is_refused_and_the_server_serves_on(server_env, tmp_path):
    with running(server_env, tmp_path / "server.log") as server:
        deep = "[" * 5_000 + "]" * 5_000
        request_id = server.new_id()
        line = (
            f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
            f'{{"name": "search_records", "arguments": {{"filters": {{"a": {deep}}}}}}}}}'
        )
        server.send_bytes(line.encode() + b"\n")
        reply = server.reply_to(request_id)
        if "error" in reply:  # refused as a message by the transport
            assert reply["error"]["code"] in (-32600, -32700)
        else:
            error = reply["result"]["structuredContent"]["error"]
            assert error["code"] == "INVALID_INPUT"
        assert server.ok("list_collections", {})


def test_a_million_item_wrongly_typed_array_gets_a_small_refusal(server_env, tmp_path):
    with running(server_env, tmp_path / "server.log") as server:
        items = ",".join(["1"] * 1_000_000)
        result = raw_call(
            server,
            "prepare_write",
            f'{{"operation": "create_record", "arguments": {{}}, "review_ids": [{items}], '
            '"decision_reason": "r"}',
        )
        error = result["structuredContent"]["error"]
        assert error["code"] == "INVALID_INPUT" and error["details"]["field"].startswith(
            "review_ids"
        )
