"""The tool list as clients see it: titles, annotations, described parameters, budget.

The snapshot makes every change to what agents read a reviewed change. After an intended
change, regenerate it with:  ANCHOR_UPDATE_TOOL_LIST=1 uv run pytest tests/mcp/test_tool_list.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from mcp.shared.exceptions import McpError

from anchor_site.devtools.benchmarks.process.tool_list import CORE_BUDGET, FULL_BUDGET, token_count
from tests.mcp_client import call_tool_raw, list_tools
from workflow.mcp import sdk, tool_list
from workflow.mcp.server import select_tools

SNAPSHOT = Path(__file__).with_name("tool_list.json")
FULL_BUDGET_TOKENS = FULL_BUDGET
CORE_BUDGET_TOKENS = CORE_BUDGET
READS = {
    "workspace_digest",
    "get_server_instructions",
    "list_collections",
    "search_records",
    "get_record_context",
    "get_record_history",
    "get_collection_history",
    "traverse",
    "aggregate",
    "batch_read",
    "discover_collections",
    "resolve_record",
    "batch_resolve_records",
    "agenda_view",
}


def listed() -> list[dict]:
    return [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in list_tools()]


tokens = token_count  # the benchmark's own count, so the two cannot disagree


@pytest.fixture
def profile():
    """Serve a profile as mcp_serve --tools does (tool list and instructions), then full again."""
    yield lambda server, selection: select_tools(selection)
    select_tools("full")


def test_every_tool_has_a_title_annotations_and_described_parameters(db):
    for tool in listed():
        name = tool["name"]
        assert tool.get("title"), f"{name} has no title"
        hints = tool.get("annotations") or {}
        assert {"readOnlyHint", "destructiveHint", "idempotentHint"} <= set(hints), name
        assert tool["name"] in tool_list.TOOL_LIST, f"{name} is missing from the tool list"
        first_sentence = tool["description"].split(".")[0]
        assert len(first_sentence) > 15, f"{name}: the first sentence says too little"
        for param, schema in tool["inputSchema"].get("properties", {}).items():
            assert schema.get("description"), f"{name}.{param} has no description"


def test_reads_are_read_only_and_writes_are_not(db):
    for tool in listed():
        hints = tool["annotations"]
        if tool["name"] in READS:
            assert hints["readOnlyHint"] is True, tool["name"]
        elif not tool["name"].startswith(("create_", "update_", "archive_", "link_", "unlink_")):
            assert hints["readOnlyHint"] is False, tool["name"]
    by_name = {t["name"]: t["annotations"] for t in listed()}
    assert by_name["commit_write"]["destructiveHint"] is True  # archive and unlink commit here
    assert by_name["prepare_write"]["destructiveHint"] is False
    assert by_name["commit_write"]["idempotentHint"] is True


def test_unknown_arguments_are_refused_not_dropped(hiring):
    result = call_tool_raw("resolve_record", {"query": "Kirat", "colection_id": "x"})
    assert result.isError and "colection_id" in result.content[0].text
    # Retired tools accept anything and answer REVIEW_REQUIRED themselves.
    retired = call_tool_raw("create_record", {"title": "x", "collection": "people"})
    assert retired.isError and retired.structuredContent["error"]["code"] == "REVIEW_REQUIRED"


def test_each_profile_fits_its_budget_before_the_first_call(db, profile):
    """The tool list and the instructions, as a model receives them."""
    from workflow.mcp.instructions import current_instructions

    full = tokens(listed(), current_instructions())
    assert full < FULL_BUDGET_TOKENS, f"the full profile costs {full} tokens"
    profile(sdk.global_server(), "core")
    core_tools = listed()
    core = tokens(core_tools, current_instructions())
    assert core <= CORE_BUDGET_TOKENS == 4_000, f"the core profile costs {core} tokens"
    assert {t["name"] for t in core_tools} == {
        n for n, meta in tool_list.TOOL_LIST.items() if meta.core
    }


def test_the_default_profile_is_core_with_the_everyday_tools():
    from anchor_site import settings

    assert settings.ANCHOR_TOOLS == "core" or os.environ.get("ANCHOR_TOOLS")
    core = {n for n, meta in tool_list.TOOL_LIST.items() if meta.core}
    # Create-and-link and multi-record updates in a batch, imports, catch-up, search by meaning.
    assert {
        "workspace_digest",
        "list_changes",
        "search_records",
        "get_record_context",
        "discover_collections",
        "resolve_record",
        "batch_resolve_records",
        "prepare_write",
        "commit_write",
        "prepare_batch_write",
        "commit_batch_write",
        "prepare_import",
        "commit_import",
    } == core
    assert not any(name.startswith("agenda_") for name in core)


def legacy_names() -> set[str]:
    from workflow.mcp.tools import legacy

    return set(legacy.STEPS)


def test_retired_tools_answer_by_name_in_a_profile_that_does_not_list_them(db, profile):
    profile(sdk.global_server(), "core")
    listed_names = {t["name"] for t in listed()}
    for name in legacy_names():
        assert name not in listed_names
        refusal = call_tool_raw(name, {"title": "x"})
        assert refusal.isError, name
        error = refusal.structuredContent["error"]
        assert error["code"] == "REVIEW_REQUIRED" and "prepare_write" in error["message"], name
    # Any other tool the profile leaves out is still unknown here.
    with pytest.raises(BaseException) as caught:  # the in-memory client's task group wraps it
        call_tool_raw("agenda_start", {})
    assert caught.group_contains(McpError, match="No tool named")


def test_profiles_and_tool_lists(db, profile):
    profile(sdk.global_server(), "resolve_record, prepare_write")
    assert {t["name"] for t in listed()} == {"resolve_record", "prepare_write"}
    with pytest.raises(ImproperlyConfigured, match="not a profile or tool.*core or full"):
        profile(sdk.global_server(), "everything")
    with pytest.raises(ImproperlyConfigured, match="resolve_recrod"):
        profile(sdk.global_server(), "resolve_recrod")


def test_tool_list_matches_the_reviewed_snapshot(db):
    current = sorted(listed(), key=lambda t: t["name"])
    if os.environ.get("ANCHOR_UPDATE_TOOL_LIST"):
        SNAPSHOT.write_text(json.dumps(current, indent=1, ensure_ascii=False) + "\n")
    assert SNAPSHOT.exists(), "no tool list snapshot; generate it (see the module docstring)"
    reviewed = json.loads(SNAPSHOT.read_text())
    assert current == reviewed, (
        "The tool list changed. Review the difference and regenerate the snapshot "
        "(see the module docstring)."
    )


def test_instructions_name_only_the_tools_the_profile_serves(db, profile):
    from workflow.mcp.instructions import current_instructions

    full = current_instructions()
    assert "batch_read" in full and "agenda_start" in full and "awaiting_approval" in full
    profile(sdk.global_server(), "core")
    core = current_instructions()
    served = {t["name"] for t in listed()}
    named = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\b", core))
    tool_names = set(tool_list.TOOL_LIST)
    assert named & tool_names <= served, f"core instructions name {named & tool_names - served}"
    assert "no_match is the expected answer before creating" in core


def test_core_descriptions_name_unserved_tools_only_when_served(db, profile):
    """A core description may point to a full-profile tool only in a sentence saying "when
    served"; otherwise a core agent is told to call a tool it does not have. Retired tools are
    left out: their names are also prepare_write's operations."""
    profile(sdk.global_server(), "core")
    core = listed()
    served = {t["name"] for t in core}
    tools = {name for name, meta in tool_list.TOOL_LIST.items() if not meta.open_arguments}
    for tool in core:
        texts = [tool["description"]] + [
            prop.get("description", "") for prop in tool["inputSchema"]["properties"].values()
        ]
        for sentence in re.split(r"(?<=\.)\s+", " ".join(texts)):
            unserved = set(re.findall(r"\b([a-z]+(?:_[a-z]+)*)\b", sentence)) & tools - served
            assert not unserved or "when served" in sentence, f"{tool['name']}: {unserved}"


def test_retired_tools_describe_the_steps_their_refusal_gives(db):
    from workflow.mcp.tools import legacy

    by_name = {t["name"]: t for t in listed()}
    for name, steps in legacy.STEPS.items():
        assert by_name[name]["description"] == legacy.description(name)
        assert "never writes" in by_name[name]["description"]
        refusal = call_tool_raw(name, {}).structuredContent["error"]
        assert steps in refusal["message"] and "never writes" in refusal["message"]


def test_nothing_a_core_agent_reads_names_a_tool_it_lacks(ctx, profile):
    """The digest (with an open agenda and a closed one to sync), the prompts and the
    instructions of the core profile name only served tools."""
    from asgiref.sync import async_to_sync

    from tests.agendas.helpers import driver, started
    from tests.mcp_client import call_tool
    from tests.workflow.test_digest import finished_unsynced
    from workflow.mcp import prompts
    from workflow.mcp.instructions import current_instructions

    finished_unsynced(ctx)  # made while the agenda tools are served
    started(driver())  # an open agenda, likewise
    profile(sdk.global_server(), "core")
    served = {t["name"] for t in listed()}
    tools = {name for name, meta in tool_list.TOOL_LIST.items() if not meta.open_arguments}
    digest = call_tool("workspace_digest", {})["result"]
    assert digest["open_agendas"], "the open agenda is listed"
    assert "ANCHOR_TOOLS=full" in digest["open_agendas"][0]["next_step"], "how to turn them on"
    assert digest["unsynced_agendas"], "the closed agenda to sync is listed"
    offered = async_to_sync(prompts.list_prompts)()
    assert "work_through_list" not in {p.name for p in offered}
    texts = [json.dumps(digest), current_instructions()]
    for prompt in offered:
        arguments = {prompt.arguments[0].name: "x"} if prompt.arguments else {}
        got = async_to_sync(prompts.get_prompt)(prompt.name, arguments)
        texts += [getattr(m.content, "text", "") for m in got.messages]
    for text in texts:
        named = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\b", text)) & tools
        assert named <= served, f"names unserved {named - served}: {text[:200]}"
