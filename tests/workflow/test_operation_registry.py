"""Operations are defined once, in workflow/operations/, and everything else reads the registry:
the published tool schemas, prepare_write, batches. A definition registered from elsewhere (the
toy one of tests/workflow/toy_operation.py) is prepared, batched and committed with no other
file touched."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from records.approval import Touched
from records.errors import AnchorError
from records.models import Record
from tests.mcp_client import list_tools
from tests.workflow.helpers import ok
from tests.workflow.toy_operation import registered, toy
from workflow import actions
from workflow.mcp.tools.writes import argument_keys_per_operation
from workflow.models import PreparedAction, ReviewTicket
from workflow.operations import (
    all_operations,
    batch_operation_names,
    discover,
    operation_named,
    operation_names,
    register,
)
from workflow.scope import Scope

ROOT = Path(__file__).resolve().parents[2]
AGENT = Scope("local", "local-agent")


def published(tool: str) -> dict[str, Any]:
    return next(t for t in list_tools() if t.name == tool).inputSchema


def test_the_tool_schemas_list_exactly_the_registered_operations_in_order(db):
    single = published("prepare_write")["properties"]["operation"]["enum"]
    batch = published("prepare_batch_write")["$defs"]["BatchAction"]["properties"]["operation"]
    assert single == list(operation_names())
    assert batch["enum"] == list(batch_operation_names())
    assert batch["enum"] == [op.name for op in all_operations() if op.batchable]
    assert set(batch["enum"]) < set(single)


def test_prepare_writes_description_lists_the_registrys_keys(db):
    """The description's account of the operations is built from their definitions."""
    described = next(t for t in list_tools() if t.name == "prepare_write").description or ""
    assert argument_keys_per_operation() in described
    words = set(re.findall(r"[a-z_]+", described))
    for op in all_operations():
        assert op.name in words, f"prepare_write's description omits {op.name}"
        assert set(op.keys) <= words or op.name == "update_collection", op.name
    assert "update_collection: collection_id + create_collection's keys; cite a discovery." in (
        described
    )
    assert "add_record_alias / remove_record_alias: record_id, alias, expected_version." in (
        described
    )


def test_a_new_operation_describes_its_own_keys_notes_and_review(db):
    with registered(toy()):
        lines = argument_keys_per_operation().splitlines()
    assert lines[-1] == (
        "flag_record: record_id, reason (a sentence), expected_version; cite a resolution of "
        "the record."
    )
    assert not any("flag_record" in line for line in argument_keys_per_operation().splitlines())


def test_a_note_on_an_argument_the_operation_does_not_take_is_refused(db):
    with pytest.raises(ValueError, match=r"notes arguments it does not take: \['colour'\]"):
        register(replace(toy(), argument_notes={"colour": "red or green"}))
    assert "flag_record" not in operation_names()


def test_each_operation_is_one_module_named_after_it():
    package = ROOT / "workflow" / "operations"
    modules = {p.stem for p in package.glob("*.py")} - {"__init__", "registry", "change", "checks"}
    assert modules == set(operation_names())
    for op in all_operations():
        own = f"workflow.operations.{op.name}"
        assert op.apply.__module__ == op.change.__module__ == own
        # a check several operations share lives in checks.py
        assert op.check.__module__ in (own, "workflow.operations.checks"), op.name


def test_no_other_module_lists_operations_by_name():
    """The guarded path, the batch shapes and the admin know operations only through the
    registry: none of them spells an operation's name."""
    readers = [
        ROOT / "workflow" / "actions.py",
        ROOT / "workflow" / "mcp" / "shapes.py",
        ROOT / "workflow" / "mcp" / "tools" / "writes.py",
        *sorted((ROOT / "workflow" / "admin").glob("*.py")),
        *sorted((ROOT / "templates" / "admin" / "workflow").rglob("*.html")),
    ]
    for path in readers:
        text = path.read_text()
        named = {name for name in operation_names() if re.search(rf"\b{name}\b", text)}
        assert not named, f"{path.relative_to(ROOT)} names {sorted(named)}"


def test_an_unknown_operation_is_refused_naming_the_ones_there_are(hiring):
    with pytest.raises(AnchorError) as refused:
        actions.prepare_write(
            AGENT, operation="merge_records", arguments={}, review_ids=[], decision_reason="x"
        )
    assert refused.value.details["field"] == "operation"
    assert str(sorted(operation_names())) in refused.value.message
    with pytest.raises(LookupError, match="merge_records"):
        operation_named("merge_records")


# --- a toy operation, defined in tests/workflow/toy_operation.py alone ------------------------


@pytest.fixture
def flag_record():
    with registered(toy()) as op:
        yield op


def flag_item(record: Record, review_id: str) -> dict[str, Any]:
    return {
        "operation": "flag_record",
        "arguments": {"record_id": record.pk, "reason": "call back", "expected_version": 1},
        "review_ids": [review_id],
        "decision_reason": "The user wants a call back.",
    }


def test_a_registered_operation_is_batched_and_committed(hiring, flag_record):
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    item = flag_item(hiring.kirat, kirat["resolution_id"])
    assert "flag_record" in batch_operation_names()
    prepared = actions.prepare_batch_write(AGENT, actions=[item])
    assert prepared["preview"]["items"][0]["operation"] == "flag_record"
    committed = actions.commit_batch_write(AGENT, action_id=prepared["action_id"])
    assert committed["status"] == "committed"
    assert Record.objects.get(pk=hiring.kirat.pk).data["flag"] == "call back"


def test_a_registered_operations_checks_run_in_a_batch(hiring, flag_record):
    """Citing no review of the record: refused by the toy's own check, naming the item."""
    abhishek = ok("resolve_record", {"query": "Abhishek", "collection_id": hiring.people.pk})
    with pytest.raises(AnchorError) as refused:
        actions.prepare_batch_write(
            AGENT, actions=[flag_item(hiring.kirat, abhishek["resolution_id"])]
        )
    assert refused.value.code == "REVIEW_REQUIRED"
    assert refused.value.message.startswith("actions[0]: ")
    assert "flag" not in Record.objects.get(pk=hiring.kirat.pk).data


def test_batches_refuse_an_operation_once_unregistered_or_not_batchable(hiring):
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    item = flag_item(hiring.kirat, kirat["resolution_id"])
    with pytest.raises(AnchorError) as unknown:
        actions.prepare_batch_write(AGENT, actions=[item])
    assert unknown.value.details["field"] == "actions[0].operation"
    assert str(list(batch_operation_names())) in unknown.value.message
    with registered(toy(batchable=False)):
        with pytest.raises(AnchorError) as refused:
            actions.prepare_batch_write(AGENT, actions=[item])
        assert refused.value.details["field"] == "actions[0].operation"
        prepared = actions.prepare_write(
            AGENT,
            operation="flag_record",
            arguments=item["arguments"],
            review_ids=item["review_ids"],
            decision_reason="The user wants a call back.",
        )
        assert prepared["operation"] == "flag_record"


def test_a_second_definition_of_a_name_or_a_rank_is_refused(db):
    with pytest.raises(ValueError, match="already registered"):
        register(toy("update_record"))
    with pytest.raises(ValueError, match="rank 60"):
        register(toy(rank=operation_named("update_record").rank))
    assert "flag_record" not in operation_names()


def test_discovery_refuses_a_module_without_a_definition_or_misnamed(tmp_path, monkeypatch):
    package = tmp_path / "toy_operations"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "checks.py").write_text("HELPER = 1\n")  # a support module, skipped
    (package / "flag_record.py").write_text(
        "from tests.workflow.toy_operation import toy\nOPERATION = toy()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover("toy_operations", [str(package)])
    assert [op.name for op in found] == ["flag_record"]
    assert "flag_record" not in operation_names()  # found, not registered
    (package / "notes.py").write_text("X = 1\n")
    with pytest.raises(ImportError, match="toy_operations.notes defines no OPERATION"):
        discover("toy_operations", [str(package)])
    (package / "notes.py").unlink()
    (package / "misnamed.py").write_text(
        "from tests.workflow.toy_operation import toy\nOPERATION = toy()\n"
    )
    with pytest.raises(ImportError, match="misnamed defines 'flag_record'; name them alike"):
        discover("toy_operations", [str(package)])


def test_what_a_write_touches_comes_from_its_definitions_check(hiring, flag_record):
    kirat = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    item = flag_item(hiring.kirat, kirat["resolution_id"])
    tickets = list(ReviewTicket.objects.filter(pk=kirat["resolution_id"]))
    touched = flag_record.check(AGENT, item["arguments"], tickets, "")
    assert touched == Touched.of(records=[hiring.kirat.pk])
    prepared = actions.prepare_batch_write(AGENT, actions=[item])
    stored = PreparedAction.objects.get(pk=prepared["action_id"])
    assert stored.collection_ids == [hiring.people.pk]
