"""Who acted, over HTTP: an agent's write names its person and the credential it acted through,
the same way in the audit event, the admin, record history, the change feed and the digest;
a person's own write in the admin and a stdio write read as before.

In process, through Django's full middleware and the /mcp view (tests/http/conftest.py); the
OAuth flow and revocation against a live server are in test_attribution_live.py.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from records.acting import acted_by, acted_by_lookup
from records.models import AuditEvent, Collection
from records.services import (
    WriteContext,
    access_token_create,
    access_token_touch,
    workspace_ensure,
    workspace_membership_add,
)
from tests.admin.forms import page_post_data
from tests.admin.review_helpers import gate
from tests.conftest import make_collection
from tests.envelope import expect_ok
from tests.http.conftest import McpHttp
from tests.mcp_client import call_tool
from workflow.models import PreparedAction

LAPTOP = "agent (token: laptop) for user:dana"


@pytest.fixture(autouse=True)
def feed_settles_at_once(settings):
    settings.ANCHOR_FEED_SETTLE_S = 0  # PostgreSQL's change feed holds back the newest events


@pytest.fixture
def dana(db) -> Any:
    user = get_user_model().objects.create_user(username="dana")
    workspace_membership_add(user=user, workspace_id="team-a")
    return user


def agent_of(user: Any, name: str) -> tuple[McpHttp, Any]:
    token, raw = access_token_create(user=user, name=name)
    return McpHttp(Client(), raw), token


@pytest.fixture
def people(dana) -> Collection:
    # dana's own write, as the admin makes it: a person, no credential.
    ctx = WriteContext(workspace_id="team-a", actor_id="user:dana", decision_reason="set-up")
    return make_collection(ctx, "people")


@pytest.fixture
def maya(db) -> Client:
    client = Client()
    client.force_login(
        get_user_model().objects.create_superuser(username="maya", password="correct horse")
    )
    return client


def create_record(agent: McpHttp, collection: Collection, title: str) -> dict[str, Any]:
    review = agent.ok("resolve_record", {"query": title, "collection_id": collection.pk})
    prepared = agent.ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection.pk, "title": title, "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "new interviewer",
        },
    )
    return agent.ok("commit_write", {"action_id": prepared["action_id"]})


def changes_by(agent: McpHttp, **arguments: Any) -> list[str]:
    feed = agent.ok("list_changes", {"since": "2000-01-01T00:00:00Z", **arguments})
    return [change["by"] for group in feed["changes"] for change in group["changes"]]


def test_a_personal_token_write_names_the_person_and_the_token_everywhere(dana, people, maya):
    agent, token = agent_of(dana, "laptop")
    committed = create_record(agent, people, "Priya")
    record_id = committed["result"]["record"]["record_id"]

    event = AuditEvent.objects.get(kind="record.created", record_id=record_id)
    assert (event.actor_id, event.credential, event.credential_name) == (
        "user:dana",
        f"token:{token.pk}",
        "laptop",
    )
    assert acted_by(event) == LAPTOP

    history = agent.ok("get_record_history", {"record_id": record_id})["events"]
    assert [(e["actor_id"], e["by"]) for e in history] == [("user:dana", LAPTOP)]
    assert changes_by(agent) == ["user:dana", LAPTOP], "dana's own write, then her agent's"
    assert changes_by(agent, by=LAPTOP) == [LAPTOP], "the label as shown filters to the agent"
    assert changes_by(agent, by="user:dana") == ["user:dana", LAPTOP], "the person: both"
    assert changes_by(agent, by="agent (token: desktop) for user:dana") == []
    digest = agent.ok("workspace_digest")
    assert any(LAPTOP in line for line in digest["recent_changes"]), digest["recent_changes"]

    audit = maya.get(reverse("admin:records_auditevent_changelist")).content.decode()
    assert LAPTOP in audit
    found = maya.get(reverse("admin:records_auditevent_changelist"), {"q": "laptop"})
    assert LAPTOP in found.content.decode(), "the credential's name is searchable"
    assert 'user:dana<br><span class="anchor-muted">(person)</span>' in audit
    record_page = maya.get(reverse("admin:records_record_change", args=[record_id]))
    assert LAPTOP in record_page.content.decode()
    dashboard = maya.get(reverse("admin:index")).content.decode()
    assert "No agent changes yet" not in dashboard
    recent = dashboard.split('id="dashboard-recent"', 1)[1].split("</div>", 2)[0]
    assert LAPTOP in recent


def test_a_held_write_and_its_approval_keep_the_agent_and_its_person(dana, people, maya):
    gate(WriteContext(workspace_id="team-a", actor_id="user:dana"), people)
    agent, token = agent_of(dana, "laptop")
    held = create_record(agent, people, "Rahul")
    assert held["status"] == "awaiting_approval"
    (action,) = PreparedAction.objects.filter(workspace_id="team-a", state="awaiting_approval")
    assert (action.credential, action.credential_name) == (f"token:{token.pk}", "laptop")

    waiting = maya.get(reverse("admin:workflow_preparedaction_change", args=[action.pk]))
    assert f"Prepared by <strong>{LAPTOP}</strong>" in waiting.content.decode()
    queue = maya.get(reverse("admin:workflow_preparedaction_changelist")).content.decode()
    assert LAPTOP in queue

    approve = reverse("admin:workflow_preparedaction_approve", args=[action.pk])
    assert maya.post(approve, {"note": "ok"}).status_code == 302
    created = AuditEvent.objects.get(kind="record.created", action_id=action.pk)
    assert acted_by(created) == LAPTOP, "applied by a person, written by the agent"
    approval = AuditEvent.objects.get(kind="action.approved", action_id=action.pk)
    assert acted_by(approval) == "user:maya"
    assert approval.before and approval.before["prepared_by"] == LAPTOP
    recent = maya.get(reverse("admin:index")).content.decode().split('id="dashboard-recent"')[1]
    assert LAPTOP in recent.split("</div>", 2)[0]


def test_the_token_list_shows_what_each_token_last_did(dana, people, maya):
    laptop, laptop_token = agent_of(dana, "laptop")
    _, idle_token = agent_of(dana, "idle")
    create_record(laptop, people, "Priya")
    tokens = maya.get(reverse("admin:records_accesstoken_changelist")).content.decode()
    only_laptop = f"?credential=token:{laptop_token.pk}"
    assert f'{only_laptop}">Created' in tokens, "the laptop's last change, linked"
    assert f"?credential=token:{idle_token.pk}" not in tokens, "a token that wrote nothing"

    events = reverse("admin:records_auditevent_changelist") + only_laptop
    listed = maya.get(events).content.decode()
    assert LAPTOP in listed and "Priya" in listed
    assert "user:dana<br>" not in listed, "dana's own write is not the token's"


def test_two_tokens_of_one_person_are_told_apart(dana, people):
    laptop, _ = agent_of(dana, "laptop")
    desktop, _ = agent_of(dana, "desktop")
    create_record(laptop, people, "Priya")
    create_record(desktop, people, "Kirat")
    assert changes_by(laptop, by="agent (token: desktop) for user:dana") == [
        "agent (token: desktop) for user:dana"
    ]


def stdio_ok(name: str, arguments: dict[str, Any]) -> Any:
    return expect_ok(call_tool(name, arguments), name, arguments)


@pytest.mark.django_db
def test_a_stdio_write_keeps_its_configured_actor():
    ctx = WriteContext(workspace_id=settings.ANCHOR_WORKSPACE_ID, actor_id="user:dana")
    people = make_collection(ctx, "people")
    review = stdio_ok("resolve_record", {"query": "Abhishek", "collection_id": people.pk})
    prepared = stdio_ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": people.pk, "title": "Abhishek", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "new interviewer",
        },
    )
    committed = stdio_ok("commit_write", {"action_id": prepared["action_id"]})
    record_id = committed["result"]["record"]["record_id"]

    event = AuditEvent.objects.get(kind="record.created", record_id=record_id)
    assert (event.actor_id, event.credential, event.credential_name) == (
        settings.ANCHOR_ACTOR_ID,
        None,
        None,
    )
    history = stdio_ok("get_record_history", {"record_id": record_id})["events"]
    assert [e["actor_id"] for e in history] == [settings.ANCHOR_ACTOR_ID]
    assert "by" not in history[0], "nothing to add to a configured actor"
    feed = stdio_ok("list_changes", {"since": "2000-01-01T00:00:00Z"})
    shown = [change["by"] for group in feed["changes"] for change in group["changes"]]
    assert shown == ["user:dana", settings.ANCHOR_ACTOR_ID]


@pytest.mark.django_db
def test_each_label_as_shown_finds_its_own_rows_only():
    workspace_ensure("team-a")
    made = [
        AuditEvent.objects.create(
            workspace_id="team-a",
            actor_id="user:dana",
            credential=credential,
            credential_name=name,
            kind="record.created",
            entity_type="record",
            entity_id=str(n),
            created_at=timezone.now(),
        )
        for n, (credential, name) in enumerate(
            [("oauth:3", "Claude (beta)"), ("token:4", "Claude (beta)"), (None, None)]
        )
    ]
    shown = [acted_by(event) for event in made]
    assert shown == [
        "agent (Claude (beta)) for user:dana",
        "agent (token: Claude (beta)) for user:dana",
        "user:dana",
    ]
    for event, label in zip(made, shown, strict=True):
        found = AuditEvent.objects.filter(acted_by_lookup(label))
        expected = made if label == "user:dana" else [event]
        assert sorted(e.pk for e in found) == sorted(e.pk for e in expected), label


def test_an_oauth_tokens_use_is_stamped_as_a_personal_tokens_is(dana):
    client = get_application_model().objects.create(
        name="Claude Code",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:33418/callback",
    )
    token = get_access_token_model().objects.create(
        user=dana,
        application=client,
        token="an-oauth-token",
        expires=timezone.now() + timedelta(hours=1),
        scope="mcp",
    )
    long_ago = timezone.now() - timedelta(hours=2)
    get_access_token_model().objects.filter(pk=token.pk).update(updated=long_ago)
    token.refresh_from_db()

    assert access_token_touch(token=token) is True
    token.refresh_from_db()
    assert token.updated > long_ago
    assert access_token_touch(token=token) is False, "once a minute at most"


def prepare_update(agent: McpHttp, record_id: str, changes: dict[str, Any]) -> str:
    review = agent.ok("resolve_record", {"query": "Priya"})
    prepared = agent.ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {"record_id": record_id, "changes": changes, "expected_version": 1},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the team moved",
        },
    )
    return prepared["action_id"]


def test_a_change_that_made_a_write_stale_names_the_agent_that_made_it(dana, people, maya):
    laptop, _ = agent_of(dana, "laptop")
    desktop, _ = agent_of(dana, "desktop")
    record_id = create_record(laptop, people, "Priya")["result"]["record"]["record_id"]
    late = prepare_update(desktop, record_id, {"team": "infra"})
    edit_url = reverse("admin:records_record_change", args=[record_id])
    form = page_post_data(maya.get(edit_url, {"edit": "1"}))

    first = laptop.ok("commit_write", {"action_id": prepare_update(laptop, record_id, {"a": 1})})
    assert first["status"] == "committed"
    desktop.refused("commit_write", {"action_id": late}, "VERSION_CONFLICT")
    stale = PreparedAction.objects.get(pk=late).stale_reason
    assert f"now at version 2 (changed by {LAPTOP} at" in stale, stale

    form.update(title="Priya Raman")
    refused = maya.post(edit_url, form).content.decode()
    assert "Nothing was saved" in refused
    assert f"Last change: version 2 by {LAPTOP} at" in refused
