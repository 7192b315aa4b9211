"""Recall by meaning from outside: records written through the guarded path by one agent are
found in other words by another agent in a fresh mcp_serve, over the official SDK client.

The second server starts cold (the model loads on its first search by meaning, not at start),
and its workspace holds only what its own agent wrote: a near-identical record seeded in
another workspace of the same database never appears. resolve_record, asked the same words,
still answers by names alone.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.server import base_env, call_ok, mcp_session, seed
from tests.e2e.test_change_feed import create

pytestmark = pytest.mark.slow

RECORDS: dict[str, dict[str, Any]] = {
    "Expense: MacBook for Priya": {"amount": 2400, "status": "approved"},
    "Team lunch at the offsite": {"amount": 180},
    "Conference ticket for Sam": {"amount": 650},
    "Office chairs for the new floor": {"amount": 900},
}


def test_another_agent_finds_in_other_words_what_was_written(server_database, tmp_path):
    env_a = base_env(**server_database, ANCHOR_ACTOR_ID="agent-a")
    env_b = base_env(**server_database, ANCHOR_ACTOR_ID="agent-b")
    env_other = base_env(**server_database, ANCHOR_WORKSPACE_ID="elsewhere")
    ids = seed(env_a, "--collections", "expenses")
    other_ids = seed(env_other, "--collections", "expenses")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below

    async def scenario():
        async with mcp_session(env_a, log) as (a, _):
            for title, data in RECORDS.items():
                await create(a, ids["expenses"], title, "User listed the team's claims", **data)
        async with mcp_session(env_other, log) as (x, _):
            await create(x, other_ids["expenses"], "Expense: laptop for Dana", "Other team")
        async with mcp_session(env_b, log) as (b, _):
            asked = {"text": "laptop reimbursement", "collection_id": ids["expenses"]}
            words = await call_ok(b, "search_records", asked)
            meaning = await call_ok(b, "search_records", {**asked, "mode": "meaning"})
            anywhere = await call_ok(
                b, "search_records", {"text": "laptop reimbursement", "mode": "meaning"}
            )
            resolved = await call_ok(
                b,
                "resolve_record",
                {"query": "laptop reimbursement", "collection_id": ids["expenses"]},
            )
        return words, meaning, anywhere, resolved

    try:
        words, meaning, anywhere, resolved = anyio.run(scenario)
    finally:
        log.close()
    assert words["records"] == []
    first = meaning["records"][0]
    assert first["title"] == "Expense: MacBook for Priya"
    assert first["matched"] == "meaning"
    assert first["evidence"] == "related, not identity evidence"
    seen = {record["title"] for record in anywhere["records"]}
    assert "Expense: laptop for Dana" not in seen  # another workspace's record
    assert seen <= set(RECORDS)
    assert resolved["status"] == "no_match"
    assert resolved.get("candidates", []) == []


CLAIMS = [f"Claim {n}: noise-cancelling headphones for the support team" for n in range(30)]


def test_an_import_is_embedded_from_its_commit_and_searched_by_meaning_meanwhile(
    server_database, tmp_path
):
    env = base_env(**server_database)
    ids = seed(env, "--collections", "expenses")
    log = open(tmp_path / "stderr.log", "w")  # noqa: SIM115 - closed below
    asked = {"text": "audio gear for the helpdesk", "mode": "meaning", "limit": 100}

    async def scenario():
        async with mcp_session(env, log) as (s, _):
            rows = [{"key": str(n), "title": title, "data": {}} for n, title in enumerate(CLAIMS)]
            prepared = await call_ok(
                s,
                "prepare_import",
                {"collection_id": ids["expenses"], "rows": rows, "decision_reason": "Claims"},
            )
            committed = await call_ok(s, "commit_import", {"action_id": prepared["action_id"]})
            assert committed["status"] == "committed", committed
            # No search has asked for them: the commit set their embedding going. Each page
            # meanwhile ranks what is embedded by meaning and counts the rest.
            pages: list[dict[str, Any]] = []
            with anyio.fail_after(60):
                while not pages or "note" in pages[-1]:
                    pages.append(await call_ok(s, "search_records", asked))
                    await anyio.sleep(0.05)
            return pages

    try:
        pages = anyio.run(scenario)
    finally:
        log.close()
    for page in pages[:-1]:
        assert page["mode"] == "meaning" and page["note"].split()[0].isdigit()
    found = {item["title"]: item["matched"] for item in pages[-1]["records"]}
    assert set(CLAIMS) <= set(found) and {found[title] for title in CLAIMS} == {"meaning"}
    assert pages[-1]["confidence"] in ("strong", "weak")
