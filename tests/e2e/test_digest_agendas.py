"""A new conversation learns from the digest of a closed agenda whose outcomes are not yet on
its records: through the official client over stdio, in a fresh server process, in the full
profile (sync it) and the core one (no agenda tool named)."""

from __future__ import annotations

import anyio

from tests.e2e.server import base_env, call_ok, mcp_session, seed


def test_the_digest_names_a_closed_agenda_still_to_sync(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)

    async def scenario():
        async with mcp_session(env, server_log) as (session, _):
            token: dict[str, str] = {}

            async def agenda(name, **arguments):
                result = await call_ok(session, name, {**token, **arguments})
                if "cursor_token" in result:
                    token.update(agenda_id=result["agenda_id"], cursor_token=result["cursor_token"])
                return result

            started = await agenda(
                "agenda_start",
                title="Follow up on candidates",
                record_ids=[ids["kirat"], ids["abhishek"]],
                source_reference="search_records people",
            )
            await agenda("agenda_acknowledge", presentation_id=started["presentation_id"])
            await agenda("agenda_step", action="complete", text="Kirat got the offer letter.")
            await agenda("agenda_step", action="next")
            await agenda("agenda_step", action="defer", text="Abhishek is travelling.")
            await agenda("agenda_control", action="finish", text="Done for today.")
            agenda_id = token["agenda_id"]

        async with mcp_session(env, server_log, "--tools", "core") as (core, _):
            digest = await call_ok(core, "workspace_digest", {})
            [unsynced] = digest["unsynced_agendas"]
            assert unsynced["agenda_id"] == agenda_id and unsynced["status"] == "finished"
            assert "agenda_" not in digest["unsynced_agendas_next_step"], "core serves none"

        async with mcp_session(env, server_log) as (fresh, _):
            digest = await call_ok(fresh, "workspace_digest", {})
            assert [a["agenda_id"] for a in digest["unsynced_agendas"]] == [agenda_id]
            assert "agenda_sync_records" in digest["unsynced_agendas_next_step"]
            view = await call_ok(fresh, "agenda_view", {"agenda_id": agenda_id})
            await call_ok(
                fresh,
                "agenda_sync_records",
                {"agenda_id": agenda_id, "cursor_token": view["cursor_token"]},
            )
            digest = await call_ok(fresh, "workspace_digest", {})
            assert "unsynced_agendas" not in digest

    anyio.run(scenario)
