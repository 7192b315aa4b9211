"""The two Rahuls through the official client: the dialog's choices can be told apart.

Each choice shows its collection and the data fields and links that differ between the
candidates; two candidates that would read the same are not asked in the client, they go back to
the agent. batch_resolve_records items take ask_user as resolve_record does, one dialog each.
"""

from __future__ import annotations

import anyio
import pytest

from tests.e2e.server import base_env, call_ok, mcp_session, seed
from tests.e2e.test_client_elicitation import CLIENT, ScriptedUser

pytestmark = pytest.mark.slow


def choices(user: ScriptedUser, index: int) -> list[str]:
    return [c["title"] for c in user.asked[index].requestedSchema["properties"]["choice"]["oneOf"]]


def test_the_two_rahuls_read_apart_and_sams_that_read_the_same_go_back(server_database, tmp_path):
    env = base_env(**server_database)
    ids = seed(env, "--namesakes")
    user = ScriptedUser(
        ("accept", "Rahul (people, team: design"), ("accept", "Rahul (people, team: infra")
    )
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env, log, elicitation_callback=user, client_info=CLIENT) as (s, _):
            rahul = await call_ok(
                s,
                "resolve_record",
                {"query": "Rahul", "collection_id": ids["people"], "ask_user": True},
            )
            assert rahul["status"] == "needs_clarification"
            assert choices(user, 0) == [
                "Rahul (people, team: infra, linked to Junior Backend)",
                "Rahul (people, team: design)",
                "A different one (none of these)",
                "Cancel: do not decide now",
            ]
            assert rahul["client_question"]["confirmation"]["record_id"] == ids["rahul_design"]

            # Two Sams with the same collection, data and links: not asked, back to the agent.
            sam = await call_ok(s, "resolve_record", {"query": "Sam", "ask_user": True})
            assert len(user.asked) == 1, "no dialog for choices that read the same"
            assert sam["status"] == "needs_clarification" and len(sam["candidates"]) == 2
            assert sam["client_question"]["asked"] is False
            assert "read the same" in sam["client_question"]["reason"]

            # A batch: each item that sets ask_user is asked as resolve_record would ask it.
            batch = await call_ok(
                s,
                "batch_resolve_records",
                {
                    "requests": [
                        {"query": "Rahul", "collection_id": ids["people"], "ask_user": True},
                        {"query": "Kirat", "ask_user": True},
                        {"query": "Sam", "ask_user": True},
                        {"query": "Rahul"},
                    ]
                },
            )
            rahul_item, kirat_item, sam_item, plain = (i["result"] for i in batch["items"])
            assert len(user.asked) == 2 and choices(user, 1) == choices(user, 0)
            confirmed = rahul_item["client_question"]["confirmation"]
            assert confirmed["record_id"] == ids["rahul_infra"]
            assert ids["rahul_infra"] in rahul_item["next_step"]
            assert kirat_item["status"] == "resolved"
            assert kirat_item["client_question"]["asked"] is False
            assert "read the same" in sam_item["client_question"]["reason"]
            assert plain["status"] == "needs_clarification" and "client_question" not in plain

    try:
        anyio.run(scenario)
    finally:
        log.close()
