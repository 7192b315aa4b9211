"""Every refusal of /mcp happens before the first write; transport refusals before any query."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from django.contrib.sessions.models import Session
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application, set_token_value
from oauth2_provider.models import RefreshToken as OAuthRefreshToken

from records.models.membership import AccessToken
from records.services import access_token_revoke
from tests.http.conftest import ACCEPT, MCP_URL, McpHttp, make_member, no_writes
from tests.http.live_servers import start
from tests.http.test_live_server import ON_POSTGRES, LiveServer

INITIALIZE_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "anchor-http-tests", "version": "1"},
}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def post_initialize(client: Client, **headers: str):
    return client.post(
        MCP_URL,
        data=json.dumps(INITIALIZE),
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream", **headers},
    )


@pytest.fixture
def alice_session(alice) -> McpHttp:
    """Alice with an open MCP session, so session rows exist before each refusal."""
    connection = alice.connect()
    connection.initialize()
    return connection


# --- authentication -------------------------------------------------------------------------


def test_no_token_is_401_with_www_authenticate_and_no_query(alice_session):
    with no_writes() as queries:
        response = post_initialize(Client())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == (
        'Bearer realm="anchor", resource_metadata="http://testserver/.well-known/'
        'oauth-protected-resource/mcp", scope="mcp"'
    )
    assert "anchor_token create" in response.json()["detail"]
    assert len(queries) == 0, "no token means nothing to look up"


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer anchor_AAAAAAAAAAAA_" + "A" * 43,  # well-formed, unknown prefix
        "Bearer not-a-token",
        "Bearer",
        "Basic YWxpY2U6c2VjcmV0",
        "Token anchor_AAAAAAAAAAAA_" + "A" * 43,
    ],
)
def test_bad_token_is_401_and_writes_nothing(alice_session, authorization):
    with no_writes():
        response = post_initialize(Client(), Authorization=authorization)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith('Bearer realm="anchor"')


def test_right_prefix_wrong_secret_is_401(alice_session, alice):
    prefix = alice.token.split("_")[1]
    forged = f"anchor_{prefix}_{'x' * 43}"
    with no_writes():
        response = post_initialize(Client(), Authorization=f"Bearer {forged}")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_revoked_token_is_401_even_with_a_live_session(alice_session, alice):
    access_token_revoke(token=AccessToken.objects.get(user=alice.user))
    with no_writes():
        response = alice_session.request("tools/list")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_inactive_user_is_401(alice_session, alice):
    alice.user.is_active = False
    alice.user.save()
    with no_writes():
        response = post_initialize(Client(), Authorization=f"Bearer {alice.token}")
    assert response.status_code == 401


def test_a_reactivated_user_gets_none_of_their_old_tokens_back(alice):
    alice.user.is_active = False
    alice.user.save()
    alice.user.is_active = True
    alice.user.save()
    assert AccessToken.objects.get(user=alice.user).revoked_at is not None
    with no_writes():
        response = post_initialize(Client(), Authorization=f"Bearer {alice.token}")
    assert response.status_code == 401


def test_deactivating_a_user_ends_their_oauth_grants(alice):
    application = Application.objects.create(
        user=None,
        name="desktop client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    access = OAuthAccessToken(
        user=alice.user,
        application=application,
        expires=timezone.now() + timedelta(hours=1),
        scope="mcp",
    )
    set_token_value(access, "alice-access-token")
    access.save()
    refresh = OAuthRefreshToken(user=alice.user, application=application, access_token=access)
    set_token_value(refresh, "alice-refresh-token")
    refresh.save()
    alice.user.is_active = False
    alice.user.save()
    assert not OAuthAccessToken.objects.exists()
    refresh.refresh_from_db()
    assert refresh.revoked is not None


# --- transport ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://testserver.evil.example", "null", "file://"]
)
def test_foreign_origin_is_403_before_any_query(alice_session, alice, origin):
    with no_writes() as queries:
        response = post_initialize(Client(), Authorization=f"Bearer {alice.token}", Origin=origin)
    assert response.status_code == 403
    assert "Origin" in response.json()["detail"]
    assert len(queries) == 0


def test_own_and_configured_origins_are_accepted(alice):
    response = post_initialize(
        Client(), Authorization=f"Bearer {alice.token}", Origin="http://testserver"
    )
    assert response.status_code == 200, response.content
    with override_settings(ANCHOR_HTTP_ALLOWED_ORIGINS=["https://ide.example"]):
        response = post_initialize(
            Client(), Authorization=f"Bearer {alice.token}", Origin="https://ide.example"
        )
    assert response.status_code == 200, response.content


def test_foreign_host_is_400_before_any_query(alice_session, alice):
    with no_writes() as queries:
        response = Client(HTTP_HOST="evil.example").post(
            MCP_URL,
            data=json.dumps(INITIALIZE),
            content_type="application/json",
            headers={"Authorization": f"Bearer {alice.token}"},
        )
    assert response.status_code == 400
    assert len(queries) == 0


def test_body_over_the_limit_is_413_before_any_query(alice_session, alice):
    padding = "x" * (4 * 1024 * 1024)
    message = {**INITIALIZE, "params": {**INITIALIZE_PARAMS, "padding": padding}}
    with no_writes() as queries:
        response = Client().post(
            MCP_URL,
            data=json.dumps(message),
            content_type="application/json",
            headers={"Authorization": f"Bearer {alice.token}"},
        )
    assert response.status_code == 413
    reply = response.json()
    assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "the limit of 4194304 (ANCHOR_HTTP_MAX_BODY_BYTES)" in reply["error"]["message"]
    assert len(queries) == 0


@override_settings(ANCHOR_HTTP_MAX_BODY_BYTES=600)
def test_the_limit_is_the_setting(alice):
    small = post_initialize(Client(), Authorization=f"Bearer {alice.token}")
    assert small.status_code == 200
    message = {**INITIALIZE, "params": {**INITIALIZE_PARAMS, "padding": "x" * 600}}
    with no_writes():
        response = Client().post(
            MCP_URL,
            data=json.dumps(message),
            content_type="application/json",
            headers={"Authorization": f"Bearer {alice.token}"},
        )
    assert response.status_code == 413


@pytest.mark.parametrize(
    "content_type",
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "text/plain", ""],
)
def test_form_encoded_or_other_bodies_are_415_before_any_query(alice_session, alice, content_type):
    with no_writes() as queries:
        response = Client().generic(
            "POST",
            MCP_URL,
            data="jsonrpc=2.0&method=initialize&id=1",
            content_type=content_type,
            headers={"Authorization": f"Bearer {alice.token}"},
        )
    assert response.status_code == 415
    assert len(queries) == 0


def test_malformed_json_is_400_and_writes_nothing(alice_session, alice):
    with no_writes():
        response = Client().generic(
            "POST",
            MCP_URL,
            data='{"jsonrpc": "2.0", "method": "initialize"',
            content_type="application/json",
            headers={"Authorization": f"Bearer {alice.token}"},
        )
    assert response.status_code == 400


# --- methods --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "HEAD", "OPTIONS"])
def test_other_methods_are_405_without_a_token_or_a_query(alice_session, method):
    with no_writes() as queries:
        response = Client().generic(method, MCP_URL)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST, DELETE"
    assert len(queries) == 0


def test_get_with_a_valid_token_and_session_is_still_405(alice_session):
    """The stock view would open an event stream here and spin a CPU forever."""
    with no_writes():
        response = alice_session.client.get(MCP_URL, headers=alice_session.headers())
    assert response.status_code == 405


# --- sessions -------------------------------------------------------------------------------


def test_initialize_opens_exactly_one_session_bound_to_the_token(alice):
    before = Session.objects.count()
    connection = alice.connect()
    connection.initialize()
    assert Session.objects.count() == before + 1
    assert Session.objects.filter(session_key=connection.session_id).exists()
    tools = connection.request("tools/list")
    assert tools.status_code == 200
    assert Session.objects.count() == before + 1, "later requests reuse the session"


def test_requests_without_a_session_are_400_and_unknown_sessions_404(alice_session, alice):
    stranger = McpHttp(Client(), alice.token)
    with no_writes():
        response = stranger.post(LIST_TOOLS)
    assert response.status_code == 400
    assert "Mcp-Session-Id" in response.json()["error"]["message"]
    stranger.session_id = "no-such-session"
    with no_writes():
        assert stranger.post(LIST_TOOLS).status_code == 404


def test_another_users_session_is_not_found(alice_session, db):
    bob = make_member("bob", "team-b")
    borrowed = McpHttp(Client(), bob.token, session_id=alice_session.session_id)
    with no_writes():
        assert borrowed.post(LIST_TOOLS).status_code == 404
        assert borrowed.client.delete(MCP_URL, headers=borrowed.headers()).status_code == 404
    assert Session.objects.filter(session_key=alice_session.session_id).exists()


def test_an_admin_login_session_is_not_an_mcp_session(alice, admin_client):
    admin_key = admin_client.session.session_key
    assert admin_key
    borrowed = McpHttp(Client(), alice.token, session_id=admin_key)
    with no_writes():
        assert borrowed.post(LIST_TOOLS).status_code == 404
        assert borrowed.client.delete(MCP_URL, headers=borrowed.headers()).status_code == 404


def test_delete_ends_the_session(alice_session):
    key = alice_session.session_id
    response = alice_session.client.delete(MCP_URL, headers=alice_session.headers())
    assert response.status_code == 204
    assert not Session.objects.filter(session_key=key).exists()
    with no_writes():
        assert alice_session.post(LIST_TOOLS).status_code == 404


def test_delete_without_a_session_header_is_400(alice):
    with no_writes():
        response = Client().delete(MCP_URL, headers={"Authorization": f"Bearer {alice.token}"})
    assert response.status_code == 400


def test_delete_needs_the_token_too(alice_session):
    with no_writes():
        response = Client().delete(MCP_URL, headers={"Mcp-Session-Id": alice_session.session_id})
    assert response.status_code == 401


# --- workspace choice -----------------------------------------------------------------------


def test_several_memberships_without_the_header_is_400_naming_it(carol):
    with no_writes():
        response = post_initialize(Client(), Authorization=f"Bearer {carol.token}")
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "X-Anchor-Workspace" in detail and "team-a" in detail and "team-b" in detail


def test_a_workspace_the_user_is_not_in_is_403(alice, bob):
    with no_writes():
        response = post_initialize(
            Client(), Authorization=f"Bearer {alice.token}", **{"X-Anchor-Workspace": "team-b"}
        )
    assert response.status_code == 403
    assert "not a member of workspace 'team-b'" in response.json()["detail"]


def test_a_user_without_membership_is_403(db):
    loner = make_member("dana")
    with no_writes():
        response = post_initialize(Client(), Authorization=f"Bearer {loner.token}")
    assert response.status_code == 403
    assert "anchor_member add" in response.json()["detail"]


def test_accepted_requests_record_when_the_token_was_used(alice):
    token = AccessToken.objects.get(user=alice.user)
    assert token.last_used_at is None
    alice.connect().initialize()
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_body_just_under_the_limit_is_served(alice):
    """Django's own 2.5 MB upload cap must not cut in below the stated 4 MiB."""
    padding = "x" * (3 * 1024 * 1024)
    message = {**INITIALIZE, "params": {**INITIALIZE_PARAMS, "padding": padding}}
    response = Client().post(
        MCP_URL,
        data=json.dumps(message),
        content_type="application/json",
        headers={"Authorization": f"Bearer {alice.token}", "Accept": ACCEPT},
    )
    assert response.status_code == 200, response.content[:300]


# --- the message's shape --------------------------------------------------------------------


def assert_our_invalid_request(response, words: str) -> None:
    assert response.status_code == 400, response.content
    reply = response.json()
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": reply["error"]["message"]},
    }
    assert words in reply["error"]["message"]
    assert "pydantic" not in response.content.decode() and len(response.content) < 300


@pytest.mark.parametrize("with_session", [False, True])
def test_a_batch_is_our_invalid_request_not_a_validation_dump(alice_session, with_session):
    if not with_session:
        alice_session.session_id = None
    with no_writes():
        response = alice_session.post([LIST_TOOLS, {**LIST_TOOLS, "id": 3}])
    assert_our_invalid_request(response, "batches (JSON arrays) are not supported")
    assert "one JSON-RPC message per request" in response.json()["error"]["message"]
    with no_writes():
        empty = alice_session.post([])
    assert_our_invalid_request(empty, "batches (JSON arrays) are not supported")


@pytest.mark.parametrize("body", [42, "tools/list", None, True])
def test_a_bare_json_value_is_our_invalid_request(alice_session, body):
    with no_writes():
        response = alice_session.post(body)
    assert_our_invalid_request(response, "expected one JSON-RPC 2.0 request or notification")


# --- against the production server ------------------------------------------------------------


@pytest.fixture
def live(tmp_path) -> Iterator[LiveServer]:
    yield from start(tmp_path)


@pytest.mark.slow
@pytest.mark.django_db(transaction=ON_POSTGRES)
def test_the_served_endpoint_answers_batches_and_foreign_hosts_in_one_line(live: LiveServer):
    token = live.token_for("alice", "team-a")
    headers = {"Accept": ACCEPT, "Authorization": f"Bearer {token}"}
    batch = httpx.post(f"{live.url}/mcp", json=[INITIALIZE, LIST_TOOLS], headers=headers)
    assert_our_invalid_request(batch, "batches (JSON arrays) are not supported")

    opened = httpx.post(f"{live.url}/mcp", json=INITIALIZE, headers=headers)
    assert opened.status_code == 200, opened.text
    in_session = {**headers, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
    batch = httpx.post(f"{live.url}/mcp", json=[LIST_TOOLS], headers=in_session)
    assert_our_invalid_request(batch, "batches (JSON arrays) are not supported")

    for path in ("/mcp", "/admin/login/"):
        foreign = httpx.post(
            f"{live.url}{path}", json=INITIALIZE, headers={**headers, "Host": "evil.example"}
        )
        assert foreign.status_code == 400
    log = live.log.read_text()
    refusals = [line for line in log.splitlines() if "evil.example" in line]
    assert len(refusals) == 2, refusals
    assert all(" WARNING django.security.DisallowedHost: " in line for line in refusals), refusals
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
