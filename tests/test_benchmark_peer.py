"""The agent-task benchmark: a task run through a real mcp_serve ends right in the store, and
the check that says so fails on a store that is wrong. Nothing here needs npx or a network."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from dataclasses import replace
from types import SimpleNamespace

import pytest

from anchor_site.devtools.benchmarks import measure, peer_tasks
from anchor_site.devtools.benchmarks.peer_tasks import Store, wrong
from anchor_site.devtools.management.commands.benchmark import Command as benchmark_command
from workflow.mcp.client import TextContent

pytestmark = pytest.mark.tooling
TASKS = {task["name"]: task for task in peer_tasks.PLAN["tasks"]}
NEW_PERSON = TASKS["remember a new person and their company"]


@pytest.mark.slow
@pytest.mark.backend_free  # its own SQLite file, whatever the backend of this run
def test_a_task_ends_right_in_anchors_store_and_a_wrong_store_fails_its_check(tmp_path):
    opener, outcomes = asyncio.run(peer_tasks.run_anchor(tmp_path, [NEW_PERSON]))
    outcome = outcomes[NEW_PERSON["name"]]
    assert outcome.problem == "", outcome.problem
    assert [tool for tool, _n, _ids in outcome.spent] == [
        "batch_resolve_records",
        "prepare_batch_write",
        "commit_batch_write",
    ]
    assert outcome.tokens > outcome.rest > 0 and opener > 0

    store = peer_tasks.anchor_store(tmp_path / "anchor.db")
    assert wrong(NEW_PERSON, store, store, "") == ""
    assert "works_at" in wrong(NEW_PERSON, store, replace(store, links=frozenset()), "")
    twice = store.entities + (("Kirat Singh", '{"role": "backend engineer"}'),)
    assert "Kirat Singh" in wrong(NEW_PERSON, store, replace(store, entities=twice), "")
    other_role = tuple((n, "{}" if n == "Kirat Singh" else t) for n, t in store.entities)
    assert "Kirat Singh" in wrong(NEW_PERSON, store, replace(store, entities=other_role), "")


def test_a_refused_step_stops_the_task_and_makes_it_wrong():
    class Session:
        async def call_tool(self, name, arguments):
            refusal = '{"ok":false,"error":{"code":"STALE_REVIEW","message":"review again"}}'
            return SimpleNamespace(content=[TextContent(type="text", text=refusal)])

    steps = [
        {"call": "prepare_write", "args": {}, "save": {"action": "action_id"}},
        {"call": "commit_write", "args": {"action_id": "$action"}},
    ]
    task = {"name": "a write", "anchor": steps, "check": []}
    agent = peer_tasks.Agent(Session())  # type: ignore[arg-type]  # answers every call alike
    empty = Store((), frozenset())
    done = asyncio.run(peer_tasks.run_tasks(agent, [task], "anchor", lambda: empty))
    outcome = done["a write"]
    assert "prepare_write refused" in outcome.problem and "STALE_REVIEW" in outcome.problem
    assert [tool for tool, _n, _ids in outcome.spent] == ["prepare_write"]


def test_a_memory_store_with_the_misspelled_name_created_fails_the_check(tmp_path):
    path = tmp_path / "memory.jsonl"
    careless = [
        {"type": "entity", "name": "Priya Raman", "entityType": "person", "observations": []},
        {"type": "entity", "name": "Priya Rahman", "entityType": "person", "observations": ["x"]},
    ]
    path.write_text("\n".join(json.dumps(line) for line in careless))
    before = peer_tasks.memory_store(path)
    found = wrong(TASKS["a misspelled name"], before, before, "")
    assert "Priya Raman" in found and "Priya Rahman" in found


def test_a_read_is_wrong_when_it_changes_the_store_or_never_says_the_facts():
    recall = TASKS["recall what is known about a name"]
    store = Store((("Kirat Singh", "{}"),), frozenset())
    said = "backend engineer, acme corp; mentors rahul sharma"
    assert wrong(recall, store, store, said) == ""
    assert "never say acme corp" in wrong(recall, store, store, "backend engineer mentors rahul")
    assert "changed the store" in wrong(recall, store, Store((), frozenset()), said)


def test_what_the_contract_makes_anchor_carry_is_split_from_the_rest():
    agent = peer_tasks.Agent(None)  # type: ignore[arg-type]  # only its accounting is used
    record, review, fresh = (str(uuid.uuid4()) for _ in range(3))
    change = {"record_id": record, "changes": {"role": "lead"}, "expected_version": 1}
    sent = {"operation": "update_record", "arguments": change, "review_ids": [review]}
    asked = agent.uncarried(sent | {"decision_reason": "Promoted."}, in_reply=False)
    assert asked == {"arguments": {"record_id": "", "changes": {"role": "lead"}}}, "IDs written"
    made = {"record": {"record_id": record, "version": 2}, "review": {"resolution_id": fresh}}
    committed = agent.uncarried({"status": "committed", "result": made}, in_reply=True)
    assert committed == {"result": made}, "an ID repeated, and a create's own extra review: rest"
    uncertain = {"status": "needs_clarification", "message": "Ask.", "candidates": [{"a": 1}]}
    assert agent.uncarried(uncertain, in_reply=True) == {"message": "Ask."}, (
        "identity evidence, whole"
    )
    context = {"record": {"title": "Kirat", "created_at": "t"}, "events": [{"kind": "k"}]}
    assert agent.uncarried(context, in_reply=True) == {"record": {"title": "Kirat"}}, "history"


def test_a_miss_is_explained_when_the_rest_meets_the_target():
    ours = {"a task": peer_tasks.Outcome([("resolve_record", 100, 60)], "")}
    theirs = {"a task": peer_tasks.Outcome([("search_nodes", 50, 0)], "")}
    found = {row.what.strip(): row for row in peer_tasks.rows(ours, theirs, 1, 1, 1)}
    median = found["median tokens per task, the 1 tasks both servers do"]
    assert (median.value, median.passed) == (100, False)
    rest = found["the same less what its contract makes Anchor carry"]
    assert (rest.value, rest.reference, rest.passed) == (40, 50, True)
    assert (
        "the rest 40, 0.80x the memory server"
        in found["a task: Anchor 1 calls, memory server 1 calls"].note
    )


def test_without_npx_the_area_prints_a_skipped_row_and_no_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    (row,) = peer_tasks.run()
    assert row.value is None and row.note == "skipped: npx not found"
    assert measure.verdict(row.as_dict()) == "-"


def test_the_area_runs_only_when_named():
    assert "peer" not in benchmark_command()._areas("")
    assert benchmark_command()._areas("peer") == ["peer"]
