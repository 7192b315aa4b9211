"""Bad arguments for every tool, generated from the tool's own input schema, over the pipe.

Three kinds per tool: arguments that fit the schema but mean nothing (random IDs, odd text),
the same with one value swapped for arbitrary JSON, a key dropped or an unknown key added, and
arbitrary JSON in place of the whole argument object. Whatever comes back: the server lives,
no reply carries a traceback or SQL, nothing fails as STORAGE_ERROR, and a refusal leaves
every table exactly as it was.

ANCHOR_RELIABILITY_EXAMPLES sets the examples per tool (default 6).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from tests.reliability import flows
from tests.reliability.harness import RawServer, ServerGone, Store, running

EXAMPLES = int(os.environ.get("ANCHOR_RELIABILITY_EXAMPLES", "6"))
LEAKS = re.compile(
    r"Traceback|File \"|\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|\bUPDATE\b.+\bSET\b|psycopg|"
    r"sqlite3\.|django\.db|IntegrityError|OperationalError|ProgrammingError",
    re.DOTALL,
)


def json_values(known_ids: list[str]) -> st.SearchStrategy[Any]:
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=40)
        | st.sampled_from(known_ids)
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
        ),
        max_leaves=8,
    )


def bad_arguments(schema: dict[str, Any], known_ids: list[str]) -> st.SearchStrategy[Any]:
    anything = json_values(known_ids)
    fitting = from_schema(schema)
    keys = sorted(schema.get("properties", {})) or ["unexpected"]

    @st.composite
    def mutated(draw: st.DrawFn) -> Any:
        fitted = draw(fitting)
        assert isinstance(fitted, dict)  # every tool's input schema is an object
        arguments = dict(fitted)
        how = draw(st.sampled_from(["swap", "drop", "extra"]))
        key = draw(st.sampled_from(keys))
        if how == "swap":
            arguments[key] = draw(anything)
        elif how == "drop":
            arguments.pop(key, None)
        else:
            arguments[draw(st.text(min_size=1, max_size=12))] = draw(anything)
        return arguments

    return fitting | mutated() | anything


def snapshot_query(tables: list[str]) -> str:
    """One round trip: every table's row count, the counters, each action's state and each
    record's version (what a refused write must not have moved)."""
    parts = [f"SELECT '{table}', count(*) FROM {table}" for table in tables]
    parts += [
        "SELECT 'counters', coalesce(sum(value), 0) FROM records_revisioncounter",
        "SELECT 'action ' || id || ' ' || state, 0 FROM workflow_preparedaction",
        "SELECT 'record ' || id, version FROM records_record",
    ]
    return " UNION ALL ".join(parts)


def user_tables(store: Store) -> list[str]:
    if store.vendor == "sqlite":
        names = store.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts%'"
        )
    else:
        names = store.rows(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
    return sorted(name for (name,) in names if name != "django_migrations")


def outcome(server: RawServer, tool: str, arguments: Any) -> tuple[bool, str]:
    """(refused, the whole reply as text) for one tools/call."""
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": server.new_id(),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )
    request_id = json.loads(line)["id"]
    server.send_bytes(line.encode() + b"\n")
    reply = server.reply_to(request_id, timeout=30)
    text = json.dumps(reply, ensure_ascii=False)
    if "error" in reply:
        return True, text
    result = reply["result"]
    if result.get("isError"):
        return True, text
    envelope = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    assert envelope.get("error") is None or envelope["error"]["code"] != "STORAGE_ERROR", (
        f"{tool} failed inside the server on {arguments!r}: {envelope}"
    )
    return not envelope["ok"], text


@pytest.mark.django_db(transaction=True)
def test_bad_arguments_never_crash_leak_or_write(server_env, store, tmp_path):
    log = tmp_path / "server.log"
    with running(server_env, log) as server:
        collection_id = flows.create_collection(server, "fuzzed")
        record = flows.create_record(server, collection_id, "fuzz target", {"n": 1})
        known_ids = [collection_id, record["result"]["result"]["record"]["record_id"]]
        tools = server.reply_to(server.request("tools/list"))["result"]["tools"]
        query = snapshot_query(user_tables(store))
        tally = {"calls": 0, "refused": 0}

        def fuzz(name: str, schema: dict[str, Any]) -> None:
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(arguments=bad_arguments(schema, known_ids))
            def check(arguments: Any) -> None:
                before = sorted(store.rows(query))
                try:
                    refused, text = outcome(server, name, arguments)
                except ServerGone:
                    pytest.fail(f"{name} killed the server with {arguments!r}:\n{log.read_text()}")
                leak = LEAKS.search(text)
                assert leak is None, f"{name} leaked {leak.group()!r}: {text[:1000]}"
                tally["calls"] += 1
                if refused:
                    tally["refused"] += 1
                    assert sorted(store.rows(query)) == before, f"{name} refused but wrote"

            check()

        for tool in tools:
            fuzz(tool["name"], tool["inputSchema"])
        assert server.ok("list_collections", {})
        assert server.close() == 0
    logged = log.read_text()
    assert "Traceback" not in logged, logged[-4000:]
    print(f"\n{len(tools)} tools, {tally['calls']} calls, {tally['refused']} refused")
