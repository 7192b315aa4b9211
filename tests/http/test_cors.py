"""CORS as a browser meets it: preflights and response headers on the endpoints a browser-based
MCP client fetches. The OAuth metadata documents are public to any origin; registration, token,
revocation and /mcp answer the origins in ANCHOR_HTTP_ALLOWED_ORIGINS only, and none while none
is listed.

The real browser's side of the same rules is tests/http/test_browser_client.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings

from tests.http.conftest import ACCEPT, MCP_URL, Member

LISTED = "http://127.0.0.1:5173"
UNLISTED = "http://evil.example"
REDIRECT_URI = f"{LISTED}/callback"
MCP_REQUEST_HEADERS = "authorization, content-type, mcp-protocol-version, mcp-session-id"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cors-tests", "version": "1"},
    },
}
# Every endpoint a browser client fetches, with the method it uses.
PUBLIC = [
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/.well-known/oauth-protected-resource"),
    ("GET", "/.well-known/oauth-protected-resource/mcp"),
]
LISTED_ONLY = [
    ("POST", "/oauth/register/"),
    ("POST", "/oauth/token/"),
    ("POST", "/oauth/revoke/"),
    ("POST", MCP_URL),
]
FETCHED = PUBLIC + LISTED_ONLY
# Pages a person opens (top-level navigations) and the admin: never CORS.
NAVIGATED = ["/oauth/authorize/", "/oauth/sign-in/", "/admin/login/", "/oauth/register/x/"]
CORS_HEADERS = (
    "Access-Control-Allow-Origin",
    "Access-Control-Allow-Methods",
    "Access-Control-Allow-Headers",
    "Access-Control-Expose-Headers",
    "Access-Control-Allow-Credentials",
)


def configured(*origins: str) -> override_settings:
    """The settings module sets both from ANCHOR_HTTP_ALLOWED_ORIGINS."""
    return override_settings(
        ANCHOR_HTTP_ALLOWED_ORIGINS=list(origins), CORS_ALLOWED_ORIGINS=list(origins)
    )


@pytest.fixture
def listed(db) -> Iterator[None]:
    with configured(LISTED):
        yield


def preflight(path: str, origin: str, method: str = "POST", headers: str = "content-type"):
    return Client().options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers,
        },
    )


def fetch(method: str, path: str, origin: str):
    """The request a browser sends after the preflight, with a body each endpoint parses."""
    client = Client()
    headers = {"Origin": origin, "Accept": ACCEPT}
    if method == "GET":
        return client.get(path, headers=headers)
    if path == MCP_URL:
        return client.post(path, json.dumps(INITIALIZE), "application/json", headers=headers)
    if path == "/oauth/register/":
        metadata = {"client_name": "cors", "redirect_uris": [REDIRECT_URI]}
        return client.post(path, json.dumps(metadata), "application/json", headers=headers)
    form = "grant_type=authorization_code&code=nope&client_id=nope&token=nope"
    return client.post(path, form, "application/x-www-form-urlencoded", headers=headers)


def cors_headers(response) -> dict[str, str]:
    return {name: response.headers[name] for name in CORS_HEADERS if name in response.headers}


def listed_list(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


# --- a listed origin ------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), FETCHED)
def test_a_listed_origin_gets_its_preflight_answered(listed, method, path):
    response = preflight(path, LISTED, method, MCP_REQUEST_HEADERS)
    assert response.status_code == 200, response.content
    assert response.headers["Access-Control-Allow-Origin"] == LISTED
    assert method.lower() in listed_list(response.headers["Access-Control-Allow-Methods"])
    assert "Access-Control-Allow-Credentials" not in response.headers, "bearer tokens only"


@pytest.mark.parametrize(("method", "path"), FETCHED)
def test_a_listed_origin_can_read_the_reply(listed, method, path):
    response = fetch(method, path, LISTED)
    assert response.status_code < 500, response.content
    assert response.headers["Access-Control-Allow-Origin"] == LISTED
    assert "origin" in listed_list(response.headers["Vary"]), "caches keep one reply per origin"
    assert "Access-Control-Allow-Credentials" not in response.headers


def test_the_mcp_preflight_allows_every_header_a_client_sends(listed):
    response = preflight(MCP_URL, LISTED, "POST", MCP_REQUEST_HEADERS)
    allowed = listed_list(response.headers["Access-Control-Allow-Headers"])
    assert allowed >= {
        "authorization",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "accept",
        "x-anchor-workspace",
    }
    deleting = preflight(MCP_URL, LISTED, "DELETE", "authorization, mcp-session-id")
    assert "delete" in listed_list(deleting.headers["Access-Control-Allow-Methods"])


def test_a_401_from_mcp_lets_the_page_read_its_challenge(listed):
    response = fetch("POST", MCP_URL, LISTED)
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
    assert response.headers["Access-Control-Allow-Origin"] == LISTED
    exposed = listed_list(response.headers["Access-Control-Expose-Headers"])
    assert {"www-authenticate", "mcp-session-id", "retry-after"} <= exposed


def test_an_initialize_from_a_listed_origin_exposes_the_session(listed, alice: Member):
    response = Client().post(
        MCP_URL,
        json.dumps(INITIALIZE),
        "application/json",
        headers={"Origin": LISTED, "Accept": ACCEPT, "Authorization": f"Bearer {alice.token}"},
    )
    assert response.status_code == 200, response.content
    assert response.headers["Mcp-Session-Id"]
    assert response.headers["Access-Control-Allow-Origin"] == LISTED
    assert "mcp-session-id" in listed_list(response.headers["Access-Control-Expose-Headers"])


@pytest.mark.parametrize("path", NAVIGATED)
def test_pages_a_person_opens_send_no_cors_headers(listed, path):
    assert cors_headers(Client().get(path, headers={"Origin": LISTED})) == {}
    assert cors_headers(preflight(path, LISTED)) == {}


# --- an unlisted origin, and nothing configured ------------------------------------------------


@pytest.mark.parametrize(("method", "path"), LISTED_ONLY)
def test_an_unlisted_origin_gets_no_cors_headers(listed, method, path):
    assert cors_headers(preflight(path, UNLISTED, method, MCP_REQUEST_HEADERS)) == {}
    assert cors_headers(fetch(method, path, UNLISTED)) == {}


@pytest.mark.parametrize(("method", "path"), PUBLIC)
@pytest.mark.parametrize("origins", [[], [LISTED]], ids=["none-listed", "one-listed"])
def test_any_origin_may_read_the_public_metadata(db, method, path, origins):
    with configured(*origins):
        answered = preflight(path, UNLISTED, method, "mcp-protocol-version")
        assert answered.status_code == 200
        assert answered.headers["Access-Control-Allow-Origin"] == UNLISTED
        assert "mcp-protocol-version" in listed_list(
            answered.headers["Access-Control-Allow-Headers"]
        )
        read = fetch(method, path, UNLISTED)
        assert read.status_code == 200
        assert read.headers["Access-Control-Allow-Origin"] == UNLISTED
        assert "Access-Control-Allow-Credentials" not in read.headers


def test_mcp_still_refuses_an_unlisted_origin_with_403(listed, alice: Member):
    answered = preflight(MCP_URL, UNLISTED, "POST", MCP_REQUEST_HEADERS)
    assert answered.status_code == 403, "the preflight reaches the view's Origin check"
    assert "Origin" in answered.json()["detail"]
    response = Client().post(
        MCP_URL,
        json.dumps(INITIALIZE),
        "application/json",
        headers={"Origin": UNLISTED, "Accept": ACCEPT, "Authorization": f"Bearer {alice.token}"},
    )
    assert response.status_code == 403
    assert cors_headers(response) == {}


@pytest.mark.parametrize(("method", "path"), LISTED_ONLY)
def test_with_no_origin_configured_cors_is_off(db, method, path):
    with configured():
        assert cors_headers(preflight(path, LISTED, method, MCP_REQUEST_HEADERS)) == {}
        assert cors_headers(fetch(method, path, LISTED)) == {}


def test_with_no_origin_configured_the_mcp_preflight_is_refused_as_before(db):
    with configured():
        no_origin = Client().options(MCP_URL, headers={"Access-Control-Request-Method": "POST"})
        assert no_origin.status_code == 405
        assert preflight(MCP_URL, LISTED).status_code == 403
