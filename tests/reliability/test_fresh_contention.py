"""Two agents (two mcp_serve processes, two actors) creating unrelated names in one collection.

Each write moves the collection's names counter, so every review the other agent holds has a
moved counter. Freshness is exact: the reviews are re-evaluated, their answers did not change,
and no commit is refused as STALE_REVIEW.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.reliability import flows
from tests.reliability.harness import RawServer, Store, running

PER_AGENT = 25


@pytest.mark.django_db(transaction=True)
def test_two_agents_creating_unrelated_names_at_once_are_never_stale(
    server_env: dict[str, str], store: Store, tmp_path: Any
) -> None:
    with running(server_env, tmp_path / "setup.log") as setup:
        collection_id = flows.create_collection(setup, "entries")

    ready = threading.Barrier(2)

    def agent(name: str) -> tuple[list[str], list[Any]]:
        env = {**server_env, "ANCHOR_ACTOR_ID": name}
        server = RawServer(env, tmp_path / f"{name}.log")
        created, refusals = [], []
        try:
            server.initialize()
            ready.wait(timeout=120)
            for _ in range(PER_AGENT):
                # Random hex titles: never within the similarity threshold of one another.
                reply = flows.create_record(server, collection_id, uuid.uuid4().hex, {})
                if reply["ok"]:
                    created.append(reply["result"]["result"]["record"]["record_id"])
                else:
                    refusals.append(reply["error"])
            assert server.close(timeout=10) == 0
        finally:
            server.kill()
        return created, refusals

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(agent, ["agent-a", "agent-b"]))
    refusals = [r for _, agent_refusals in results for r in agent_refusals]
    assert refusals == [], f"{len(refusals)} refused: {refusals[:3]}"
    stored = {
        row[0]
        for row in store.rows(
            "SELECT id FROM records_record WHERE collection_id = ?", (collection_id,)
        )
    }
    assert stored == {record_id for created, _ in results for record_id in created}
    assert len(stored) == 2 * PER_AGENT
