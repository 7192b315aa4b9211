"""Resource pickers through the official client over stdio: completion/complete offers the
IDs of records and collections whose names hold what the user typed, in the configured
workspace only."""

from __future__ import annotations

import anyio
from mcp.types import ResourceTemplateReference

from tests.e2e.server import base_env, mcp_session, seed

RECORDS = ResourceTemplateReference(type="ref/resource", uri="anchor://records/{record_id}")
COLLECTIONS = ResourceTemplateReference(
    type="ref/resource", uri="anchor://collections/{collection_id}"
)


def test_record_and_collection_pickers_match_titles_in_the_workspace(server_database, server_log):
    env = base_env(**server_database)
    ids = seed(env)
    env_other = base_env(**server_database, ANCHOR_WORKSPACE_ID="elsewhere")
    theirs = seed(env_other)

    async def scenario():
        async with mcp_session(env, server_log) as (session, initialized):
            assert initialized.capabilities.completions is not None
            picked = await session.complete(RECORDS, {"name": "record_id", "value": "kir"})
            assert picked.completion.values == [ids["kirat"]]
            # Names starting with the typed text come first.
            picked = await session.complete(RECORDS, {"name": "record_id", "value": "a"})
            assert picked.completion.values[0] == ids["abhishek"]
            assert set(picked.completion.values) >= {ids["abhishek"], ids["kirat"]}
            picked = await session.complete(RECORDS, {"name": "record_id", "value": "zzz"})
            assert picked.completion.values == []
            # Another workspace's record, even typed whole, is never offered.
            picked = await session.complete(
                RECORDS, {"name": "record_id", "value": theirs["kirat"]}
            )
            assert picked.completion.values == []
            assert theirs["kirat"] != ids["kirat"]
            picked = await session.complete(COLLECTIONS, {"name": "collection_id", "value": "OPEN"})
            assert picked.completion.values == [ids["openings"]]

    anyio.run(scenario)
