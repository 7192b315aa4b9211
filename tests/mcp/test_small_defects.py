"""Small disagreements between what the tools say and what they do, each held by a test."""

from __future__ import annotations

from asgiref.sync import async_to_sync

from tests.mcp_client import call_tool, list_tools
from tests.workflow.helpers import ok
from workflow.mcp import prompts


def test_the_catch_up_prompt_reads_unread_changes_with_list_changes(db):
    got = async_to_sync(prompts.get_prompt)("catch_up", {})
    text = getattr(got.messages[0].content, "text", "")
    assert "workspace_digest" in text and "list_changes since_last_read=true" in text


def test_list_changes_says_it_moves_a_read_mark_and_is_not_marked_read_only(db):
    tool = next(t for t in list_tools() if t.name == "list_changes")
    assert tool.annotations.readOnlyHint is False and tool.annotations.destructiveHint is False
    text = " ".join(tool.description.split())
    assert "Changes no record" in text and "moves your own read mark" in text


def test_set_self_leaves_the_version_alone_as_the_batch_description_says(hiring):
    tool = next(t for t in list_tools() if t.name == "prepare_batch_write")
    assert "a self mapping or a link leaves versions alone" in " ".join(tool.description.split())
    kirat = hiring.kirat
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    version = kirat.version
    prepared = ok(
        "prepare_batch_write",
        {
            "actions": [
                {
                    "operation": "set_self",
                    "arguments": {"record_id": kirat.pk, "expected_version": version},
                    "review_ids": [review["resolution_id"]],
                    "decision_reason": "the user said they are Kirat",
                    "clarification": "I am Kirat.",
                },
                {
                    "operation": "update_record",
                    "arguments": {
                        "record_id": kirat.pk,
                        "changes": {"stage": "offer"},
                        "expected_version": version,
                    },
                    "review_ids": [review["resolution_id"]],
                    "decision_reason": "the user made an offer",
                },
            ]
        },
    )
    committed = ok("commit_batch_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed"
    kirat.refresh_from_db()
    assert kirat.version == version + 1  # the update's bump alone


def test_a_dotted_key_in_a_field_list_gets_a_hint(hiring):
    found = ok(
        "search_records",
        {
            "collection_id": hiring.people.pk,
            "where": [{"field": ["data.email"], "op": "exists"}],
        },
    )
    assert found["records"] == []
    assert 'use ["email"]' in found["hint"]
    # A key that really holds a dot is a key, and gets no hint when it matches.
    plain = call_tool(
        "search_records",
        {"collection_id": hiring.people.pk, "where": [{"field": ["email"], "op": "exists"}]},
    )
    assert plain["result"]["records"] and "hint" not in plain["result"]
