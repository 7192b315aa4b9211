"""The agent hears back, through the official client over stdio: a write a person rejected (with
the reason) and one that went stale reach the agent that made them in its next digest and in
the change feed, once each; the server instructions say what to do with them."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio

from tests.e2e.server import REPO_ROOT, base_env, call_ok, mcp_session, seed

# What a person does in the admin, run against the server's database as the admin would.
PERSON = """
import json, os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
django.setup()
from django.conf import settings
from records import services
from records.models import Collection
from records.services import WriteContext
from workflow.actions import approve_prepared_action, reject_prepared_action
step = json.loads(sys.argv[1])
if step["do"] == "gate":
    ws = settings.ANCHOR_WORKSPACE_ID
    people = Collection.objects.get(workspace_id=ws, name="people")
    ctx = WriteContext(workspace_id=ws, actor_id="user:maya", decision_reason="gate it")
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=people.pk, requires_approval=True
    )
elif step["do"] == "reject":
    reject_prepared_action(action_id=step["id"], reviewer="user:maya", reason=step["why"])
else:
    approve_prepared_action(action_id=step["id"], reviewer="user:maya", described=step["as"])
"""


def person(env: dict[str, str], **step: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PERSON, json.dumps(step)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


async def held_update(session, record_id: str, title: str, stage: str) -> str:
    review = await call_ok(session, "resolve_record", {"query": record_id})
    prepared = await call_ok(
        session,
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": record_id,
                "changes": {"stage": stage},
                "expected_version": 1,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": f"The user said {title} moves to {stage}.",
        },
    )
    held = await call_ok(session, "commit_write", {"action_id": prepared["action_id"]})
    assert held["status"] == "awaiting_approval", held
    assert held["action_id"] == prepared["action_id"], "the held write names what to commit later"
    return prepared["action_id"]


def test_rejected_and_stale_writes_reach_their_agent_once(server_database, server_log):
    env = base_env(**server_database, ANCHOR_FEED_SETTLE_S="0")
    ids = seed(env)
    person(env, do="gate")

    async def scenario():
        async with mcp_session(env, server_log) as (session, started):
            assert "your_writes_not_applied" in (started.instructions or "")
            cursor = (await call_ok(session, "workspace_digest", {}))["changes_cursor"]
            rejected = await held_update(session, ids["kirat"], "Kirat", "offer")
            first = await held_update(session, ids["abhishek"], "Abhishek", "offer")
            second = await held_update(session, ids["abhishek"], "Abhishek", "withdrawn")

        person(env, do="reject", id=rejected, why="Kirat has not interviewed yet.")
        person(env, do="approve", id=first, **{"as": "update Abhishek: stage = offer"})

        async with mcp_session(env, server_log) as (session, _):
            digest = await call_ok(session, "workspace_digest", {})
            told = {w["action_id"]: w for w in digest["your_writes_not_applied"]}
            assert set(told) == {rejected, second}
            assert told[rejected]["state"] == "rejected"
            assert told[rejected]["why"] == "Kirat has not interviewed yet."
            assert told[second]["state"] == "stale"
            assert told[second]["why"].startswith("Approving “update Abhishek: stage = offer”")
            again = await call_ok(session, "workspace_digest", {})
            assert "your_writes_not_applied" not in again, "told once"

            feed = await call_ok(session, "list_changes", {"cursor": cursor})
            decided = {
                (change["what"], change.get("action_id"))
                for group in feed["changes"]
                for change in group["changes"]
                if change.get("action_id")
            }
            assert ("rejected", rejected) in decided and ("stale", second) in decided
            later = await call_ok(session, "list_changes", {"cursor": feed["next_cursor"]})
            assert not later["changes"], "each once"

    anyio.run(scenario)
