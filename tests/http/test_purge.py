"""`manage.py anchor_purge`: what it removes, what it keeps, and replay after the retention."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application, Grant

from records.errors import AnchorError
from tests.conftest import make_collection, make_record
from workflow.actions import commit_write, prepare_write
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.resolution import resolve_record
from workflow.scope import Scope


def prepared_update(scope: Scope, record: Any, stage: str) -> dict[str, Any]:
    review = resolve_record(scope, query=record.title, collection_id=record.collection_id)
    return prepare_write(
        scope,
        operation="update_record",
        arguments={"record_id": record.pk, "changes": {"stage": stage}, "expected_version": 1},
        review_ids=[review["resolution_id"]],
        decision_reason=f"moving {record.title} along",
    )


def purge(*options: str) -> str:
    out = StringIO()
    call_command("anchor_purge", *options, stdout=out)
    return out.getvalue()


@pytest.fixture
def scope(ctx) -> Scope:
    return Scope(ctx.workspace_id, ctx.actor_id)


def test_expired_tickets_uncommitted_actions_and_sessions_go(ctx, scope):
    people = make_collection(ctx, "people")
    kirat, rahul = make_record(ctx, people, "Kirat"), make_record(ctx, people, "Rahul")
    abandoned = prepared_update(scope, kirat, "onsite")
    fresh = prepared_update(scope, rahul, "offer")
    long_ago = timezone.now() - timedelta(days=2)
    PreparedAction.objects.filter(pk=abandoned["action_id"]).update(expires_at=long_ago)
    ReviewTicket.objects.update(expires_at=long_ago)  # every ticket, the fresh action's too

    old, current = SessionStore(), SessionStore()
    old.create()
    current.create()
    Session.objects.filter(pk=old.session_key).update(expire_date=long_ago)

    printed = purge()
    assert "expired uncommitted actions: 1" in printed
    assert not PreparedAction.objects.filter(pk=abandoned["action_id"]).exists()
    assert PreparedAction.objects.filter(pk=fresh["action_id"]).exists()
    # The fresh action's ticket stays while the action waits (expired tickets make it stale
    # on commit, with a clear message, rather than "no such review").
    waiting = PreparedAction.objects.get(pk=fresh["action_id"])
    assert list(ReviewTicket.objects.values_list("pk", flat=True)) == waiting.review_ids
    assert "expired review tickets: 1" in printed
    assert list(Session.objects.values_list("pk", flat=True)) == [current.session_key]


def test_committed_results_go_after_the_retention_and_replay_says_so(ctx, scope):
    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    prepared = prepared_update(scope, kirat, "onsite")
    committed = commit_write(scope, action_id=prepared["action_id"])
    assert committed["status"] == "committed"
    assert commit_write(scope, action_id=prepared["action_id"])["replayed"] is True

    PreparedAction.objects.update(decided_at=timezone.now() - timedelta(days=29))
    assert "committed results past retention: 0" in purge()
    assert commit_write(scope, action_id=prepared["action_id"])["replayed"] is True

    PreparedAction.objects.update(decided_at=timezone.now() - timedelta(days=31))
    assert "committed results past retention: 1" in purge()
    action = PreparedAction.objects.get(pk=prepared["action_id"])
    assert action.state == ActionState.COMMITTED and action.result is None
    with pytest.raises(AnchorError) as refused:
        commit_write(scope, action_id=prepared["action_id"])
    assert "was committed" in refused.value.message
    assert "cannot be replayed" in refused.value.message
    assert refused.value.details["committed"] is True
    kirat.refresh_from_db()
    assert kirat.version == 2, "nothing was applied twice"


def test_the_retention_is_an_option(ctx, scope):
    people = make_collection(ctx, "people")
    prepared = prepared_update(scope, make_record(ctx, people, "Kirat"), "onsite")
    commit_write(scope, action_id=prepared["action_id"])
    PreparedAction.objects.update(decided_at=timezone.now() - timedelta(days=8))
    assert "committed results past retention: 0" in purge()
    assert "committed results past retention: 1" in purge("--result-retention-days", "7")
    with pytest.raises(CommandError):
        purge("--result-retention-days", "0")


def test_expired_oauth_codes_and_tokens_go(db, django_user_model):
    user = django_user_model.objects.create_user(username="alice")
    app = Application.objects.create(
        name="client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/cb",
    )
    past, future = timezone.now() - timedelta(hours=1), timezone.now() + timedelta(hours=1)
    for code, expires in (("old", past), ("new", future)):
        Grant.objects.create(
            user=user,
            application=app,
            code=code,
            expires=expires,
            redirect_uri="http://127.0.0.1/cb",
        )
    for value, expires in (("old-token", past), ("new-token", future)):
        OAuthAccessToken.objects.create(
            user=user, application=app, token=value, expires=expires, scope="mcp"
        )
    assert "expired or revoked OAuth codes and tokens: 2" in purge()
    assert list(Grant.objects.values_list("code", flat=True)) == ["new"]
    assert OAuthAccessToken.objects.get().expires == future


def registered_client(name: str) -> Application:
    """A client registered as an MCP client does it: POST /oauth/register/ with no account."""
    answered = Client().post(
        "/oauth/register/",
        data=json.dumps(
            {
                "client_name": name,
                "redirect_uris": ["http://127.0.0.1:33418/callback"],
                "token_endpoint_auth_method": "none",
            }
        ),
        content_type="application/json",
    )
    assert answered.status_code == 201, answered.content
    return Application.objects.get(client_id=answered.json()["client_id"])


def test_registered_clients_never_used_go_after_the_age(db, django_user_model):
    alice = django_user_model.objects.create_user(username="alice")
    idle, authorized, signed_in, fresh = (
        registered_client(name) for name in ("idle", "authorized", "signed in", "fresh")
    )
    admin_made = Application.objects.create(
        name="made by a superuser",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/cb",
    )
    owned = registered_client("owned")
    owned.user = alice
    owned.save()
    later = timezone.now() + timedelta(hours=1)
    Grant.objects.create(
        user=alice, application=authorized, code="c", expires=later, redirect_uri="http://x/"
    )
    OAuthAccessToken.objects.create(
        user=alice, application=signed_in, token="t", expires=later, scope="mcp"
    )
    eight_days_ago = timezone.now() - timedelta(days=8)
    Application.objects.exclude(pk=fresh.pk).update(created=eight_days_ago)

    printed = purge()
    assert "unused registered OAuth clients: 1" in printed
    remaining = set(Application.objects.values_list("name", flat=True))
    assert remaining == {"authorized", "signed in", "fresh", "made by a superuser", "owned"}
    assert not OAuthAccessToken.objects.filter(application_id=idle.pk).exists(), (
        "its registration token went with it"
    )
    assert admin_made.pk in set(Application.objects.values_list("pk", flat=True))

    Application.objects.filter(pk=fresh.pk).update(created=timezone.now() - timedelta(days=2))
    assert "unused registered OAuth clients: 0" in purge()
    assert "unused registered OAuth clients: 1" in purge("--unused-client-days", "1")
    with pytest.raises(CommandError):
        purge("--unused-client-days", "0")


def test_metadata_document_clients_never_used_go_after_an_hour(db, django_user_model):
    """A metadata-document client is a copy of a document, made again on the client's next
    visit: unused, it leaves the purge (and the next new client) after an hour, not days."""

    def client(name: str, source: str) -> Application:
        return Application.objects.create(
            name=name,
            client_id=f"https://clients.example/{name}.json",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1:33418/callback",
            registration_source=source,
        )

    cimd, dcr = Application.RegistrationSource.CIMD, Application.RegistrationSource.DCR
    client("idle document", cimd)
    client("registered", dcr)
    client("fresh document", cimd)
    authorized = client("authorized document", cimd)
    Grant.objects.create(
        user=django_user_model.objects.create_user(username="alice"),
        application=authorized,
        code="c",
        expires=timezone.now() + timedelta(hours=1),
        redirect_uri="http://x/",
    )
    two_hours_ago = timezone.now() - timedelta(hours=2)
    Application.objects.exclude(name="fresh document").update(created=two_hours_ago)

    assert "unused registered OAuth clients: 1" in purge()
    assert set(Application.objects.values_list("name", flat=True)) == {
        "registered",
        "fresh document",
        "authorized document",
    }

    # The next new client clears them too, without waiting for the purge.
    client("idle again", cimd)
    Application.objects.filter(name="idle again").update(created=two_hours_ago)
    registered_client("newcomer")
    assert not Application.objects.filter(name="idle again").exists()
    assert Application.objects.filter(name="registered").exists()
