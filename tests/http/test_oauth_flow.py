"""Team mode's OAuth 2.1, end to end against a live server: discovery, registration, sign-in,
consent, code exchange with the verifier, then a guarded write over /mcp; and every refusal
the MCP authorization spec asks for.

The first test is driven by the MCP SDK's own OAuth client (the one hosted and desktop clients
build on), with a scripted person in place of the browser; the rest speak the protocol by hand
so each refusal is seen exactly.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from pydantic import AnyUrl

from records.services import access_token_create, workspace_membership_add
from tests.e2e.server import call_ok
from tests.http.oauth_browser import Browser, pkce_pair, redirect_query
from tests.http.test_live_server import LiveServer, guarded_write, live  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long pass phrase for tests"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "oauth-tests", "version": "1"},
    },
}


class MemoryStorage:
    """Token storage for the SDK's client: what a desktop client keeps in its keychain."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def make_person(username: str, *workspaces: str) -> Any:
    user = get_user_model().objects.create_user(username=username, password=PASSWORD)
    for workspace in workspaces:
        workspace_membership_add(user=user, workspace_id=workspace)
    return user


@pytest.fixture
def alice(transactional_db) -> Any:
    return make_person("alice", "team-a")


@pytest.fixture
def browser(live_server, alice):
    person = Browser(live_server.url, "alice", PASSWORD)
    yield person
    person.close()


# --- the official SDK client ---------------------------------------------------------------


async def connect_with_oauth(url: str, browser: Browser, storage: MemoryStorage, work: Any) -> Any:
    answered: dict[str, str] = {}

    async def open_in_browser(authorization_url: str) -> None:
        answered.update(await asyncio.to_thread(browser.authorize, authorization_url))

    async def wait_for_callback() -> tuple[str, str | None]:
        return answered["code"], answered.get("state")

    provider = OAuthClientProvider(
        server_url=f"{url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Anchor OAuth test client",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=open_in_browser,
        callback_handler=wait_for_callback,
    )
    async with (
        create_mcp_http_client(auth=provider) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_the_sdk_oauth_client_connects_and_makes_a_guarded_write(live_server, browser):
    storage = MemoryStorage()
    record = asyncio.run(connect_with_oauth(live_server.url, browser, storage, guarded_write))
    assert record["title"] == "Priya"

    token = get_access_token_model().objects.get(user__username="alice")
    assert token.resource == [f"{live_server.url}/mcp"], "bound to this /mcp (RFC 8707)"
    assert token.application.name == "Anchor OAuth test client"
    assert storage.tokens is not None and storage.tokens.refresh_token

    async def history(session: ClientSession) -> Any:
        return await call_ok(session, "get_record_history", {"record_id": record["record_id"]})

    # The stored token is reused: no second consent (the browser would fail: no code is waiting).
    events = asyncio.run(connect_with_oauth(live_server.url, browser, storage, history))
    assert {event["actor_id"] for event in events["events"]} == {"user:alice"}


# --- the protocol by hand --------------------------------------------------------------------


def discover(url: str) -> dict[str, Any]:
    """From a bare 401 to the authorization server's endpoints, as a client finds them."""
    refused = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert refused.status_code == 401
    challenge = refused.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    metadata_url = f"{url}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in challenge
    resource = httpx.get(metadata_url).json()
    assert resource["resource"] == f"{url}/mcp"
    assert resource["authorization_servers"] == [url]
    assert "mcp" in resource["scopes_supported"]
    assert httpx.get(f"{url}/.well-known/oauth-protected-resource").json() == resource
    server = httpx.get(f"{url}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == url
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert "none" in server["token_endpoint_auth_methods_supported"]
    return server


def register(server: dict[str, Any], redirect_uri: str = REDIRECT_URI) -> str:
    registered = httpx.post(
        server["registration_endpoint"],
        json={
            "client_name": "Hand-rolled client",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert registered.status_code == 201, registered.text
    return registered.json()["client_id"]


def authorize_url(
    server: dict[str, Any], client_id: str, challenge: str, **overrides: str | None
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "state": "xyz",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "mcp",
        "resource": server["issuer"] + "/mcp",
        **overrides,
    }
    params = {key: value for key, value in params.items() if value is not None}
    return f"{server['authorization_endpoint']}?{urlencode(params)}"


def exchange(server: dict[str, Any], client_id: str, code: str, verifier: str, **extra: str):
    return httpx.post(
        server["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
            "resource": server["issuer"] + "/mcp",
            **extra,
        },
    )


def refresh(server: dict[str, Any], client_id: str, refresh_token: str) -> httpx.Response:
    return httpx.post(
        server["token_endpoint"],
        data={
            "grant_type": "refresh_token",
            "client_id": client_id,
            "refresh_token": refresh_token,
            "resource": server["issuer"] + "/mcp",
        },
    )


def mcp_status(url: str, access_token: str) -> int:
    answered = httpx.post(
        f"{url}/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {access_token}"},
    )
    return answered.status_code


def signed_in_code(browser: Browser, server: dict[str, Any], client_id: str) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    answered = browser.authorize(authorize_url(server, client_id, challenge))
    assert answered["state"] == "xyz"
    assert answered["iss"] == server["issuer"], "RFC 9207: the redirect names the issuer"
    return answered["code"], verifier


def test_the_consent_page_names_the_client_the_workspace_and_the_redirect(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    _, challenge = pkce_pair()
    consent = browser.consent(authorize_url(server, client_id, challenge))
    assert "Hand-rolled client" in consent.page
    assert "team-a" in consent.page
    assert "127.0.0.1:33418" in consent.page
    assert 'id="site-name"' in consent.page, "drawn in the admin's frame"

    denied = browser.answer(consent, allow=False)
    assert denied.status_code == 302
    assert redirect_query(denied)["error"] == "access_denied"
    assert not get_access_token_model().objects.filter(user__username="alice").exists()


def test_a_code_is_exchanged_only_with_its_verifier_and_redirect_uri(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)

    code, verifier = signed_in_code(browser, server, client_id)
    wrong_verifier = exchange(server, client_id, code, pkce_pair()[0])
    assert wrong_verifier.status_code == 400
    assert wrong_verifier.json()["error"] == "invalid_grant"

    code, verifier = signed_in_code(browser, server, client_id)
    wrong_redirect = exchange(
        server, client_id, code, verifier, redirect_uri="http://127.0.0.1:33418/elsewhere"
    )
    assert wrong_redirect.status_code == 400
    assert wrong_redirect.json()["error"] in {"invalid_grant", "invalid_request"}

    code, verifier = signed_in_code(browser, server, client_id)
    issued = exchange(server, client_id, code, verifier)
    assert issued.status_code == 200, issued.text
    tokens = issued.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp"
    assert mcp_status(live_server.url, tokens["access_token"]) == 200
    replayed = exchange(server, client_id, code, verifier)
    assert replayed.status_code == 400, "a code is used once"


def test_authorization_requests_the_spec_forbids_are_refused(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    verifier, challenge = pkce_pair()

    plain = browser.open_consent(
        authorize_url(server, client_id, verifier, code_challenge_method="plain")
    )
    assert plain.status_code == 302 and redirect_query(plain)["error"] == "invalid_request"
    no_pkce = browser.open_consent(
        authorize_url(server, client_id, "", code_challenge=None, code_challenge_method=None)
    )
    assert no_pkce.status_code == 302 and redirect_query(no_pkce)["error"] == "invalid_request"
    other = browser.open_consent(
        authorize_url(server, client_id, challenge, resource="https://elsewhere.example/mcp")
    )
    assert other.status_code == 302 and redirect_query(other)["error"] == "invalid_target"
    no_resource = browser.open_consent(authorize_url(server, client_id, challenge, resource=None))
    assert redirect_query(no_resource)["error"] == "invalid_target"

    # An unregistered redirect URI is never redirected to: the page says so instead.
    foreign = browser.open_consent(
        authorize_url(server, client_id, challenge, redirect_uri="https://evil.example/cb")
    )
    assert foreign.status_code == 400
    assert "Location" not in foreign.headers

    # The resource rides in a hidden field of the consent form; editing it is refused too.
    consent = browser.consent(authorize_url(server, client_id, challenge))
    tampered = browser.answer(consent, allow=True, resource="https://elsewhere.example/mcp")
    assert tampered.status_code == 302 and redirect_query(tampered)["error"] == "invalid_target"
    assert not get_access_token_model().objects.filter(user__username="alice").exists()


def test_refresh_rotates_and_a_replayed_refresh_token_revokes_the_family(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    first = exchange(server, client_id, code, verifier).json()

    rotated = refresh(server, client_id, first["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert mcp_status(live_server.url, second["access_token"]) == 200

    replay = refresh(server, client_id, first["refresh_token"])
    assert replay.status_code == 400
    assert mcp_status(live_server.url, second["access_token"]) == 401, "the family is revoked"
    assert refresh(server, client_id, second["refresh_token"]).status_code == 400


def issued_tokens(live_server, browser) -> tuple[dict[str, Any], str, dict[str, Any]]:
    server = discover(live_server.url)
    client_id = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    tokens = exchange(server, client_id, code, verifier).json()
    assert mcp_status(live_server.url, tokens["access_token"]) == 200
    return server, client_id, tokens


def test_a_token_for_another_resource_is_refused(live_server, browser):
    _, _, tokens = issued_tokens(live_server, browser)
    get_access_token_model().objects.update(resource=["https://elsewhere.example/mcp"])
    assert mcp_status(live_server.url, tokens["access_token"]) == 401
    get_access_token_model().objects.update(resource=[])
    assert mcp_status(live_server.url, tokens["access_token"]) == 401, "bound to nothing: refused"


def test_an_expired_token_is_refused_with_a_challenge(live_server, browser):
    _, _, tokens = issued_tokens(live_server, browser)
    get_access_token_model().objects.update(expires=timezone.now() - timedelta(seconds=1))
    answered = httpx.post(
        f"{live_server.url}/mcp",
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert answered.status_code == 401
    assert 'error="invalid_token"' in answered.headers["WWW-Authenticate"]
    assert "resource_metadata=" in answered.headers["WWW-Authenticate"]


def test_revoking_the_grant_or_deactivating_the_user_stops_it_at_once(live_server, browser):
    server, client_id, tokens = issued_tokens(live_server, browser)
    revoked = httpx.post(
        server["revocation_endpoint"],
        data={"token": tokens["refresh_token"], "client_id": client_id},
    )
    assert revoked.status_code == 200
    assert mcp_status(live_server.url, tokens["access_token"]) == 401
    assert refresh(server, client_id, tokens["refresh_token"]).status_code == 400

    # A second authorization, then the person is deactivated in the admin.
    code, verifier = signed_in_code(browser, server, client_id)
    fresh = exchange(server, client_id, code, verifier).json()
    assert mcp_status(live_server.url, fresh["access_token"]) == 200
    get_user_model().objects.filter(username="alice").update(is_active=False)
    assert mcp_status(live_server.url, fresh["access_token"]) == 401
    assert refresh(server, client_id, fresh["refresh_token"]).status_code == 400
    assert get_refresh_token_model().objects.filter(user__username="alice").exists()


def test_a_registration_token_is_no_key_to_mcp(live_server, alice):
    server = discover(live_server.url)
    registered = httpx.post(
        server["registration_endpoint"],
        json={"client_name": "probe", "redirect_uris": [REDIRECT_URI]},
    ).json()
    assert mcp_status(live_server.url, registered["registration_access_token"]) == 401


def test_personal_tokens_keep_working_beside_oauth(live_server, browser, alice):
    _, raw = access_token_create(user=alice, name="laptop")
    assert mcp_status(live_server.url, raw) == 200
    _, _, tokens = issued_tokens(live_server, browser)
    assert mcp_status(live_server.url, raw) == 200


def test_registration_takes_plain_http_callbacks_only_to_loopback(live_server, alice):
    server = discover(live_server.url)
    for accepted in ("http://localhost:5173/cb", "http://[::1]:9/cb", "https://app.example/cb"):
        assert register(server, accepted)
    refused = httpx.post(
        server["registration_endpoint"],
        json={"client_name": "sniffable", "redirect_uris": ["http://app.example/cb"]},
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"


def test_the_sdk_oauth_client_against_the_production_server(live: LiveServer):  # noqa: F811
    """The same flow against gunicorn with its ASGI workers, set up with the README's commands."""
    live.manage("anchor_member", "add", "alice", "team-a", "--create-user")
    live.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        f"u = get_user_model().objects.get(username='alice'); u.set_password({PASSWORD!r}); "
        "u.save()",
    )
    person = Browser(live.url, "alice", PASSWORD)
    try:
        record = asyncio.run(connect_with_oauth(live.url, person, MemoryStorage(), guarded_write))
    finally:
        person.close()
    assert record["title"] == "Priya"
    assert "Traceback" not in live.log.read_text()
