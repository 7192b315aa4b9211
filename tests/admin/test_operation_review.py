"""Every operation is shown to a reviewer through one generic path: its definition says what it
would change as plain data, and the review page and the queue draw it without knowing the
operation. The toy operation of tests/workflow/toy_operation.py, registered here, is reviewed
and approved like any other."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from records.models import Record, Relationship
from tests.admin.review_helpers import AGENT, gate
from tests.mcp_client import call_tool
from tests.workflow.toy_operation import registered, toy
from workflow.actions import commit_write, prepare_write
from workflow.admin.panels import pending_on_edit
from workflow.models import ActionState, PreparedAction
from workflow.operations import operation_names
from workflow.resolution import resolve_record

QUEUE = "admin:workflow_preparedaction_changelist"
COLLECTION = {
    "purpose": "Who referred whom",
    "record_meaning": "One referral",
    "typical_fields": ["referrer"],
    "relationship_guidance": "",
}


def examples(hiring) -> dict[str, tuple[dict[str, Any], str]]:
    """For each operation: arguments, and the summary a reviewer reads for them."""
    kirat, people = hiring.kirat.pk, hiring.people.pk
    link = Relationship.objects.filter(source=hiring.kirat_backend, target=hiring.kirat).get()
    versioned = {"record_id": kirat, "expected_version": 1}
    return {
        "create_collection": (
            {"name": "referrals", **COLLECTION},
            "create collection: name = referrals, purpose = Who referred whom, "
            "record_meaning = One referral, relationship_guidance …",
        ),
        "update_collection": (
            {"collection_id": people, "name": "people", **COLLECTION},
            "update collection people: name = people, purpose = Who referred whom, "
            "record_meaning = One referral, relationship_guida…",
        ),
        "add_collection_alias": (
            {"collection_id": people, "alias": "candidates"},
            "add collection alias people: alias = candidates",
        ),
        "remove_collection_alias": (
            {"collection_id": people, "alias": "candidates"},
            "remove collection alias people: alias removed",
        ),
        "create_record": (
            {"collection_id": people, "title": "Priya", "data": {"city": "Pune"}},
            "create Priya in people",
        ),
        "update_record": (
            {**versioned, "changes": {"email": "k@example.com", "stage": "offer"}},
            "update Kirat: email kirat@example.com → k@example.com, stage = offer",
        ),
        "archive_record": (versioned, "archive Kirat: archived no → yes"),
        "rename_record": (
            {**versioned, "title": "Kirat Singh"},
            "rename Kirat: title Kirat → Kirat Singh",
        ),
        "add_record_alias": ({**versioned, "alias": "KS"}, "add alias to Kirat: alias = KS"),
        "remove_record_alias": (
            {**versioned, "alias": "KS"},
            "remove alias from Kirat: alias removed",
        ),
        "set_self": (versioned, "map “me” to Kirat"),
        "link_records": (
            {
                "source_id": hiring.abhishek.pk,
                "relationship_type": "interested_in",
                "target_id": hiring.frontend.pk,
            },
            "link Abhishek —interested_in→ Senior Frontend",
        ),
        "unlink_records": ({"relationship_id": link.pk}, f"unlink relationship {link.pk}"),
    }


def stored(operation: str, arguments: dict[str, Any]) -> PreparedAction:
    """A prepared action as the store keeps one (the page reads nothing else)."""
    now = timezone.now()
    return PreparedAction.objects.create(
        workspace_id=AGENT.workspace_id,
        actor_id=AGENT.actor_id,
        operation=operation,
        arguments=arguments,
        decision_reason="The user asked.",
        state=ActionState.PREPARED,
        created_at=now,
        expires_at=now + timedelta(minutes=15),
    )


def summary_on(page: str) -> str:
    found = re.search(r'<h2 id="review-summary">(.*?)</h2>', page, re.S)
    assert found, "the review page has no summary"
    return html.unescape(found.group(1))


def test_every_operation_has_an_example_here(hiring):
    assert set(examples(hiring)) == set(operation_names())


def test_every_operation_is_summarised_on_its_page_and_in_the_queue(admin_client_as_maya, hiring):
    actions = {name: stored(name, args) for name, (args, _) in examples(hiring).items()}
    queue = html.unescape(admin_client_as_maya.get(reverse(QUEUE)).content.decode())
    for name, (_, summary) in examples(hiring).items():
        url = reverse("admin:workflow_preparedaction_change", args=[actions[name].pk])
        page = admin_client_as_maya.get(url).content.decode()
        assert summary_on(page) == summary, name
        assert summary in queue, name


def test_a_field_change_shows_before_and_after_and_links_name_their_ends(
    admin_client_as_maya, hiring
):
    update = stored("update_record", examples(hiring)["update_record"][0])
    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[update.pk])
    ).content.decode()
    email = (
        '<td>email</td>\n        <td class="old">kirat@example.com</td>\n        <td class="new">'
    )
    assert email in page
    assert '<td>stage <span class="anchor-muted">(added)</span></td>' in page
    # what the operation does, in its definition's words, where the reviewer reads its verb
    described = "Merge changes into a record&#x27;s data (top-level keys)."
    assert f'<strong title="{described}">Update' in page
    linked = stored("link_records", examples(hiring)["link_records"][0])
    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[linked.pk])
    ).content.decode()
    for record in (hiring.abhishek, hiring.frontend):
        url = reverse("admin:records_record_change", args=[record.pk])
        assert f'<a href="{url}">{record.title}</a>' in page
    assert "—<em>interested_in</em>→" in page


def test_an_operation_no_longer_defined_still_shows_by_its_name(admin_client_as_maya, hiring):
    """A stored action outlives its operation's module: its page still opens."""
    retired = stored("merge_records", {"record_id": hiring.kirat.pk})
    page = admin_client_as_maya.get(
        reverse("admin:workflow_preparedaction_change", args=[retired.pk])
    ).content.decode()
    assert summary_on(page) == "merge records"


def test_a_held_write_of_a_retired_operation_goes_stale_and_its_record_page_still_opens(
    admin_client_as_maya, hiring
):
    """A write held for approval whose operation an upgrade retired can never be applied as
    prepared: the record's page opens, finds it stale, and still links to it."""
    retired = stored("merge_records", {"record_id": hiring.kirat.pk, "expected_version": 1})
    PreparedAction.objects.filter(pk=retired.pk).update(state=ActionState.AWAITING_APPROVAL)
    page = admin_client_as_maya.get(reverse("admin:records_record_change", args=[hiring.kirat.pk]))
    assert page.status_code == 200
    assert reverse("admin:workflow_preparedaction_change", args=[retired.pk]) in page.text
    retired.refresh_from_db()
    assert retired.state == ActionState.STALE
    assert "no longer exists" in retired.stale_reason


def test_the_agents_commit_of_a_retired_operation_is_refused_as_stale(hiring):
    """Over MCP: a prepared write whose operation is gone is STALE_REVIEW, naming it."""
    retired = stored("merge_records", {"record_id": hiring.kirat.pk, "expected_version": 1})
    refused = call_tool("commit_write", {"action_id": retired.pk})
    assert refused["ok"] is False
    assert refused["error"]["code"] == "STALE_REVIEW"
    assert refused["error"]["details"]["operation"] == "merge_records"
    retired.refresh_from_db()
    assert retired.state == ActionState.STALE


def test_the_edit_panel_lists_a_held_write_of_a_retired_operation_without_its_keys(
    hiring, rf, admin_user
):
    """The edit form's panel alone (the record page's refresh is not what keeps it working)."""
    retired = stored("merge_records", {"record_id": hiring.kirat.pk, "expected_version": 1})
    PreparedAction.objects.filter(pk=retired.pk).update(state=ActionState.AWAITING_APPROVAL)
    request = rf.get("/")
    request.user = admin_user
    panel = pending_on_edit(request, Record.objects.get(pk=hiring.kirat.pk))
    assert reverse("admin:workflow_preparedaction_change", args=[retired.pk]) in panel


def test_the_edit_panel_says_which_held_writes_a_save_makes_stale(hiring, rf, admin_user):
    """Each kind says whether it was checked against the record's exact version: a single
    archival and a batch holding one were; an import linking the record was not."""
    kirat = hiring.kirat.pk
    archive = {"record_id": kirat, "expected_version": 1}
    item = {"index": 0, "operation": "archive_record", "arguments": archive, "review_ids": []}
    link = {"source": {"row": "a"}, "relationship_type": "knows", "target": {"record_id": kirat}}
    held = {
        "single": stored("archive_record", archive),
        "batch": stored(
            "batch", {"items": [{**item, "decision_reason": "x", "clarification": ""}]}
        ),
        "import": stored(
            "import",
            {
                "collection_id": hiring.people.pk,
                "rows": [{"key": "a", "title": "Ana"}],
                "links": [link],
            },
        ),
    }
    PreparedAction.objects.update(state=ActionState.AWAITING_APPROVAL)
    request = rf.get("/")
    request.user = admin_user
    panel = str(pending_on_edit(request, Record.objects.get(pk=kirat)))
    for kind, action in held.items():
        url = reverse("admin:workflow_preparedaction_change", args=[action.pk])
        shown = panel[panel.index(url) :].split("</li>")[0]
        assert ("saving makes it stale" in shown) == (kind != "import"), kind


@pytest.fixture
def flag_record():
    with registered(toy()) as op:
        yield op


def test_a_registered_operation_is_reviewed_and_approved_in_the_admin(
    admin_client_as_maya, hiring, ctx, flag_record
):
    gate(ctx, hiring.people)
    review = resolve_record(AGENT, query="Kirat", collection_id=hiring.people.pk)
    prepared = prepare_write(
        AGENT,
        operation="flag_record",
        arguments={"record_id": hiring.kirat.pk, "reason": "call back", "expected_version": 1},
        review_ids=[review["resolution_id"]],
        decision_reason="The user wants a call back.",
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    url = reverse("admin:workflow_preparedaction_change", args=[prepared["action_id"]])
    page = admin_client_as_maya.get(url).content.decode()
    assert summary_on(page) == "flag Kirat: flag = call back"
    assert '<td>flag <span class="anchor-muted">(added)</span></td>' in page
    queue = html.unescape(
        admin_client_as_maya.get(reverse(QUEUE), {"queue": "pending"}).content.decode()
    )
    assert "flag Kirat: flag = call back" in queue
    approve = reverse("admin:workflow_preparedaction_approve", args=[prepared["action_id"]])
    assert admin_client_as_maya.post(approve, {"note": "fine"}).status_code == 302
    assert PreparedAction.objects.get(pk=prepared["action_id"]).state == ActionState.COMMITTED
    assert Record.objects.get(pk=hiring.kirat.pk).data["flag"] == "call back"
