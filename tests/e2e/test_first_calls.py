"""First calls as an agent makes them, through the official client over stdio.

Two new records in two collections and a link between them in four calls, on the default
profile, whose tool list and instructions cost at most 4,000 tokens; an ID of the wrong kind
answered with what it is; an import's rows linked without resolving them again.
"""

from __future__ import annotations

import uuid

import anyio

from anchor_site.devtools.benchmarks.process.tool_list import CORE_BUDGET, token_count
from tests.e2e.server import base_env, call_ok, envelope, mcp_session, seed


def test_create_and_link_across_collections_in_four_calls(server_database, server_log):
    env = base_env(**server_database)
    del env["ANCHOR_TOOLS"]  # a plain mcp_serve, as a client configuration starts it
    seed(env)

    async def scenario():
        async with mcp_session(env, server_log) as (session, init):
            tools = [
                t.model_dump(mode="json", exclude_none=True, by_alias=True)
                for t in (await session.list_tools()).tools
            ]
            names = {t["name"] for t in tools}
            assert "prepare_batch_write" in names and "agenda_start" not in names
            assert "create_record" not in names and "list_collections" not in names
            assert token_count(tools, init.instructions or "") <= CORE_BUDGET
            # A retired tool is not listed, yet a call by name still gives its replacement.
            retired = envelope(await session.call_tool("create_record", {"title": "x"}))
            assert retired["error"]["code"] == "REVIEW_REQUIRED"
            assert "prepare_write" in retired["error"]["message"]
            calls = 0

            async def call(name, arguments):
                nonlocal calls
                calls += 1
                return await call_ok(session, name, arguments)

            catalog = await call("workspace_digest", {})
            ids = {c["name"]: c["collection_id"] for c in catalog["collections"]}
            resolved = await call(
                "batch_resolve_records",
                {
                    "requests": [
                        {"query": "Meera Iyer", "collection_id": ids["people"]},
                        {"query": "Staff Designer", "collection_id": ids["openings"]},
                    ]
                },
            )
            person, opening = (item["result"] for item in resolved["items"])
            assert person["status"] == opening["status"] == "no_match"
            prepared = await call(
                "prepare_batch_write",
                {
                    "actions": [
                        {
                            "operation": "create_record",
                            "arguments": {
                                "collection_id": ids["people"],
                                "title": "Meera Iyer",
                                "data": {"city": "Chennai"},
                            },
                            "review_ids": [person["resolution_id"]],
                            "decision_reason": "the user introduced Meera",
                        },
                        {
                            "operation": "create_record",
                            "arguments": {
                                "collection_id": ids["openings"],
                                "title": "Staff Designer",
                                "data": {},
                            },
                            "review_ids": [opening["resolution_id"]],
                            "decision_reason": "the user opened the role",
                        },
                        {
                            "operation": "link_records",
                            "arguments": {
                                "source_id": "actions[0]",
                                "relationship_type": "applied_to",
                                "target_id": "actions[1]",
                            },
                            "decision_reason": "Meera applied for it",
                        },
                    ]
                },
            )
            committed = await call("commit_batch_write", {"action_id": prepared["action_id"]})
            assert committed["status"] == "committed"
            assert calls == 4
            items = committed["result"]["items"]
            assert items[0]["review"]["resolution_id"], "the new record is reviewed for next"
            made = await call("get_record_context", {"record_id": items[0]["record"]["record_id"]})
            [link] = made["links"]["outgoing"]
            assert link["relationship_id"] == items[2]["relationship"]["relationship_id"]
            assert link["record_id"] == items[1]["record"]["record_id"]

    anyio.run(scenario)


def test_wrong_kinds_of_id_are_named(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)

    async def scenario():
        async with mcp_session(env, server_log) as (session, _):
            review = await call_ok(
                session, "resolve_record", {"query": "Kirat", "collection_id": ids["people"]}
            )
            reply = envelope(
                await session.call_tool("commit_write", {"action_id": review["resolution_id"]})
            )
            error = reply["error"]
            assert error["code"] == "NOT_FOUND" and error["details"]["got"] == "resolution"
            assert error["details"]["field"] == "action_id"
            assert "review_ids" in error["message"]
            reply = envelope(
                await session.call_tool("get_record_context", {"record_id": str(uuid.uuid4())})
            )
            error = reply["error"]
            assert error["details"] == {
                "id": error["details"]["id"],
                "field": "record_id",
                "expected": "record",
            }
            assert "resolve_record" in error["message"]

    anyio.run(scenario)


def test_imported_rows_are_linked_without_resolving_them_again(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)

    async def scenario():
        async with mcp_session(env, server_log) as (session, _):
            prepared = await call_ok(
                session,
                "prepare_import",
                {
                    "collection_id": ids["people"],
                    "rows": [{"key": "m", "title": "Meera Iyer"}],
                    "decision_reason": "pasted list",
                },
            )
            committed = await call_ok(
                session, "commit_import", {"action_id": prepared["action_id"]}
            )
            row = committed["result"]["rows"]["m"]
            kirat = await call_ok(session, "resolve_record", {"query": ids["kirat"]})
            linked = await call_ok(
                session,
                "prepare_write",
                {
                    "operation": "link_records",
                    "arguments": {
                        "source_id": row["record_id"],
                        "relationship_type": "knows",
                        "target_id": ids["kirat"],
                    },
                    "review_ids": [row["resolution_id"], kirat["resolution_id"]],
                    "decision_reason": "they know each other",
                },
            )
            done = await call_ok(session, "commit_write", {"action_id": linked["action_id"]})
            assert done["status"] == "committed"

    anyio.run(scenario)
