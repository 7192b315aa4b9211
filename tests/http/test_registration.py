"""Dynamic client registration (RFC 7591) and its updates (RFC 7592), from outside over HTTP:
one callback rule for both, a complete reply, a budget per address and a cap on clients no one
owns."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from oauth2_provider.models import Application

from tests.http.test_live_server import LiveServer, serve

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CALLBACK = "http://127.0.0.1:33418/callback"
SMUGGLED = "http://127.0.0.1:33418/callback http://evil.example/steal"
PUBLIC_CLIENT = {
    "client_name": "Registration test client",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
RFC7591_REPLY_FIELDS = {
    "client_id",
    "client_id_issued_at",
    "client_name",
    "redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "registration_access_token",
    "registration_client_uri",
}


def register(url: str, redirect_uris: Any, **metadata: Any) -> httpx.Response:
    body = {**PUBLIC_CLIENT, "redirect_uris": redirect_uris, **metadata}
    return httpx.post(f"{url}/oauth/register/", json=body)


def update(registered: dict[str, Any], redirect_uris: Any, **metadata: Any) -> httpx.Response:
    return httpx.put(
        registered["registration_client_uri"],
        json={**PUBLIC_CLIENT, "client_id": registered["client_id"], "redirect_uris": redirect_uris}
        | metadata,
        headers={"Authorization": f"Bearer {registered['registration_access_token']}"},
    )


def refused(response: httpx.Response, error: str, *words: str) -> str:
    assert response.status_code == 400, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["error"] == error, body
    for word in words:
        assert word in body["error_description"], body
    return body["error_description"]


BAD_CALLBACKS = [
    ([SMUGGLED], "invalid_redirect_uri", ("redirect_uris[0]", "whitespace")),
    ([CALLBACK, "http://127.0.0.1:1/a\thttp://x.example/b"], "invalid_redirect_uri", ("[1]",)),
    (["http://app.example/callback"], "invalid_redirect_uri", ("plain http", "https")),
    (["http://127.0.0.1.evil.example/cb"], "invalid_redirect_uri", ("plain http",)),
    (["https://app.example/callback#done"], "invalid_redirect_uri", ("fragment",)),
    (["https://*.app.example/callback"], "invalid_redirect_uri", ("wildcard",)),
    (["https://user:pw@app.example/callback"], "invalid_redirect_uri", ("password",)),
    (["http://localhost@evil.example/cb"], "invalid_redirect_uri", ("user name",)),
    (["/callback"], "invalid_redirect_uri", ("absolute",)),
    (["javascript:alert(1)"], "invalid_redirect_uri", ("scheme 'javascript'",)),
    (["cursor://anysphere/callback"], "invalid_redirect_uri", ("ANCHOR_OAUTH_REDIRECT_SCHEMES",)),
    (["https://app.example/é"], "invalid_redirect_uri", ("percent-encode",)),
    (["https://app.example:99999/cb"], "invalid_redirect_uri", ("port",)),
    (["https://app.example/" + "a" * 600], "invalid_redirect_uri", ("at most 512",)),
    ([f"https://app.example/{n}" for n in range(11)], "invalid_client_metadata", ("at most 10",)),
    ([], "invalid_redirect_uri", ("empty",)),
    ("https://app.example/callback", "invalid_client_metadata", ("array",)),
    ([7], "invalid_client_metadata", ("redirect_uris[0]", "string")),
]


@pytest.mark.parametrize(("redirect_uris", "error", "words"), BAD_CALLBACKS)
def test_registration_refuses_callbacks_outside_the_rule(live_server, redirect_uris, error, words):
    refused(register(live_server.url, redirect_uris), error, *words)
    assert not Application.objects.exists(), "a refused registration wrote nothing"


def test_registration_takes_https_loopback_http_and_configured_schemes(live_server, settings):
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "cursor"],
    }
    accepted = [
        "https://app.example/callback?tab=1",
        "http://127.0.0.1:5173/cb",
        "http://localhost:5173/cb",
        "http://[::1]:9/cb",
        "cursor://anysphere.cursor-mcp/oauth/callback",
    ]
    answered = register(live_server.url, accepted)
    assert answered.status_code == 201, answered.text
    assert answered.json()["redirect_uris"] == accepted
    stored = Application.objects.get(client_id=answered.json()["client_id"])
    assert stored.redirect_uris.split() == accepted


def test_registration_refuses_grants_and_responses_this_server_does_not_serve(live_server):
    refused(
        register(live_server.url, [CALLBACK], grant_types=["client_credentials"]),
        "invalid_client_metadata",
        "grant_types",
    )
    refused(
        register(live_server.url, [CALLBACK], grant_types=["authorization_code", "password"]),
        "invalid_client_metadata",
        "authorization code",
    )
    refused(
        register(live_server.url, [CALLBACK], response_types=["token"]),
        "invalid_client_metadata",
        '["code"]',
    )
    assert not Application.objects.exists()


def test_the_registration_reply_is_complete(live_server):
    before = int(time.time())
    public = register(live_server.url, [CALLBACK])
    assert public.status_code == 201, public.text
    reply = public.json()
    assert set(reply) >= RFC7591_REPLY_FIELDS, RFC7591_REPLY_FIELDS - set(reply)
    assert reply["response_types"] == ["code"]
    assert reply["grant_types"] == ["authorization_code", "refresh_token"]
    assert reply["token_endpoint_auth_method"] == "none"
    assert reply["redirect_uris"] == [CALLBACK]
    assert before - 1 <= reply["client_id_issued_at"] <= time.time() + 1
    assert "client_secret" not in reply

    confidential = register(
        live_server.url, [CALLBACK], token_endpoint_auth_method="client_secret_basic"
    ).json()
    assert confidential["client_secret"] and confidential["client_secret_expires_at"] == 0

    read = httpx.get(
        reply["registration_client_uri"],
        headers={"Authorization": f"Bearer {reply['registration_access_token']}"},
    )
    assert read.status_code == 200, read.text
    assert set(read.json()) >= RFC7591_REPLY_FIELDS
    assert read.json()["client_id_issued_at"] == reply["client_id_issued_at"]


def test_an_update_goes_through_the_same_rule(live_server):
    registered = register(live_server.url, [CALLBACK]).json()
    client_id = registered["client_id"]

    for bad in ([SMUGGLED], ["http://app.example/callback"], ["https://app.example/cb#x"]):
        refused(update(registered, bad), "invalid_redirect_uri", "redirect_uris[0]")
        assert Application.objects.get(client_id=client_id).redirect_uris == CALLBACK
    refused(
        update(registered, [CALLBACK], grant_types=["client_credentials"]),
        "invalid_client_metadata",
    )

    moved = update(registered, ["https://app.example/callback"])
    assert moved.status_code == 200, moved.text
    assert moved.json()["redirect_uris"] == ["https://app.example/callback"]
    assert set(moved.json()) >= RFC7591_REPLY_FIELDS
    stored = Application.objects.get(client_id=client_id)
    assert stored.redirect_uris == "https://app.example/callback"


def test_registration_stops_at_the_cap_on_clients_no_one_owns(live_server, settings):
    settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS = 2
    # Made in the admin, not self-registered: it does not count.
    Application.objects.create(
        name="admin's", client_type="public", authorization_grant_type="authorization-code"
    )
    for _ in range(2):
        assert register(live_server.url, [CALLBACK]).status_code == 201
    full = register(live_server.url, [CALLBACK])
    assert full.status_code == 503, full.text
    assert full.json()["error"] == "temporarily_unavailable"
    assert "ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS" in full.json()["error_description"]
    assert "anchor_purge" in full.json()["error_description"]
    assert Application.objects.count() == 3


def test_unused_document_clients_give_way_to_a_registration_at_the_cap(live_server, settings):
    settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS = 2
    for name in ("older", "newer"):
        Application.objects.create(
            name=name,
            client_id=f"https://clients.example/{name}.json",
            client_type="public",
            authorization_grant_type="authorization-code",
            redirect_uris=CALLBACK,
            registration_source=Application.RegistrationSource.CIMD,
        )
    registered = register(live_server.url, [CALLBACK])
    assert registered.status_code == 201, registered.text
    assert set(Application.objects.values_list("name", flat=True)) == {
        "newer",
        PUBLIC_CLIENT["client_name"],
    }
    assert register(live_server.url, [CALLBACK]).status_code == 201
    # Registered clients never give way to one another.
    assert register(live_server.url, [CALLBACK]).status_code == 503
    assert Application.objects.count() == 2


def metadata_with(**fields: Any) -> str:
    return json.dumps({**PUBLIC_CLIENT, "redirect_uris": [CALLBACK], **fields})


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, ("The body", "deep")),
        (metadata_with(jwks=nested(50)), ('"jwks"', "deep")),
        (metadata_with(client_name="a\x00b"), ('"client_name"', "NUL")),
        (metadata_with(contacts=["a\x00@example.com"]), ('"contacts"', "NUL")),
    ],
)
def test_deep_nesting_and_nul_characters_are_refused_naming_the_field(live_server, body, words):
    """Registration and update alike: a JSON 400 naming the field, never a server error."""
    registered = register(live_server.url, [CALLBACK]).json()
    json_body = {"Content-Type": "application/json"}
    refused(
        httpx.post(f"{live_server.url}/oauth/register/", content=body, headers=json_body),
        "invalid_client_metadata",
        *words,
    )
    token = {"Authorization": f"Bearer {registered['registration_access_token']}"}
    refused(
        httpx.put(registered["registration_client_uri"], content=body, headers=json_body | token),
        "invalid_client_metadata",
        *words,
    )
    assert Application.objects.get().name == PUBLIC_CLIENT["client_name"], "nothing changed"


@pytest.fixture
def live_three_per_hour(tmp_path):
    yield from serve(tmp_path, workers=1, ANCHOR_OAUTH_REGISTRATION_RATE="3/hour")


def test_the_registration_budget_is_charged_whatever_the_request_carries(live_three_per_hour):
    """Against the production server: credentials of any kind and refused bodies all count,
    and the fourth attempt in the hour is refused with Retry-After."""
    live: LiveServer = live_three_per_hour
    url = f"{live.url}/oauth/register/"
    body = {**PUBLIC_CLIENT, "redirect_uris": [CALLBACK]}
    first = httpx.post(url, json=body, headers={"Authorization": "Bearer junk"})
    assert first.status_code == 201, first.text
    second = httpx.post(url, json=body, headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert second.status_code == 201, second.text
    bad = httpx.post(url, json={**body, "redirect_uris": [SMUGGLED]})
    assert bad.status_code == 400

    over = httpx.post(url, json=body, headers={"Authorization": "Bearer other"})
    assert over.status_code == 429, over.text
    assert over.json()["error"] == "too_many_requests"
    assert "ANCHOR_OAUTH_REGISTRATION_RATE" in over.json()["error_description"]
    assert 1 <= int(over.headers["Retry-After"]) <= 3600
    # Everything else on /oauth/ keeps its own budget.
    assert httpx.get(f"{live.url}/.well-known/oauth-authorization-server").status_code == 200
    assert "Traceback" not in live.log.read_text()
