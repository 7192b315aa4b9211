"""Rate limits on team mode's HTTP endpoints: per token, and per address without one.

Each limit answers 429 with Retry-After before any database work; another token or address is
not affected; the window passing lifts it; the stdio server knows nothing of it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from anchor_site.env import rate_from_env
from anchor_site.http import ratelimit
from tests.e2e.server import base_env, mcp_session
from tests.http.conftest import MCP_URL, PROTOCOL_VERSION, no_writes

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "rate-tests", "version": "1"},
    },
}


REGISTRATION = {
    "client_name": "rate-tests",
    "redirect_uris": ["http://127.0.0.1:8976/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


@pytest.fixture
def clock(monkeypatch):
    """Time as the limiter sees it, moved by the test (the middle of a window to start)."""
    now = {"t": 1_000_050.0}
    monkeypatch.setattr(ratelimit.time, "time", lambda: now["t"])
    return now


@pytest.fixture(autouse=True)
def fresh_verdicts() -> Iterator[None]:
    """No credential remembered as accepted or refused from another test."""
    ratelimit.VERDICTS.clear()
    yield
    ratelimit.VERDICTS.clear()


def caches_clear() -> None:
    caches["ratelimit"].clear()
    ratelimit.VERDICTS.clear()


def initialize_with(authorization: str | None, address: str = "127.0.0.1", **extra: str) -> Any:
    headers = {"Accept": "application/json, text/event-stream", **extra}
    if authorization:
        headers["Authorization"] = authorization
    return Client(REMOTE_ADDR=address).post(
        MCP_URL, data=json.dumps(INITIALIZE), content_type="application/json", headers=headers
    )


def initialize(token: str | None = None, address: str = "127.0.0.1", **extra: str) -> Any:
    return initialize_with(f"Bearer {token}" if token else None, address, **extra)


def register(authorization: str) -> Any:
    return Client().post(
        "/oauth/register/",
        data=json.dumps(REGISTRATION),
        content_type="application/json",
        headers={"Authorization": authorization},
    )


@override_settings(ANCHOR_HTTP_RATE_LIMIT=(3, 60))
def test_a_token_over_its_limit_gets_429_with_retry_after(alice, bob, clock):
    for _ in range(3):
        assert initialize(alice.token).status_code == 200
    with no_writes() as queries:
        refused = initialize(alice.token)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "30"
    assert "3 per 60 s" in refused.json()["detail"]
    assert len(queries) == 0, "refused before the token is even looked up"

    assert initialize(bob.token).status_code == 200, "another token has its own count"
    clock["t"] += 30
    assert initialize(alice.token).status_code == 200, "the next window starts afresh"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(2, 60))
def test_unauthenticated_requests_count_per_address(db, clock):
    assert initialize().status_code == 401
    assert initialize().status_code == 401
    refused = initialize()
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "30"
    assert initialize(address="127.0.0.2").status_code == 401, "another address is not limited"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(2, 60))
def test_made_up_tokens_are_charged_to_the_address(alice, clock):
    fake = "anchor_AAAAAAAAAAAA_" + "x" * 43
    assert initialize(fake + "1").status_code == 401
    assert initialize("oauth-shaped-junk").status_code == 401
    with no_writes() as queries:
        assert initialize(fake + "3").status_code == 429
        assert initialize("oauth-shaped-junk").status_code == 429
    assert len(queries) == 0, "a token this process saw refused is stopped by the address alone"
    with no_writes() as queries:
        assert initialize("never-seen-junk").status_code == 429
    assert len(queries) <= 1, "a token not seen before costs one lookup, then the address stops it"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(2, 60))
def test_a_valid_token_keeps_working_while_its_address_is_flooded_with_bad_ones(alice, clock):
    for attempt in range(5):
        initialize(f"junk-{attempt}")
    assert initialize().status_code == 429, "the address is spent"
    for _ in range(3):
        assert initialize(alice.token).status_code == 200, "the valid token pays for itself"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(2, 60))
def test_a_valid_tokens_requests_do_not_spend_the_address(alice, clock):
    for _ in range(5):
        assert initialize(alice.token).status_code == 200
    assert initialize().status_code == 401
    assert initialize().status_code == 401
    assert initialize().status_code == 429


@pytest.mark.parametrize(
    "authorization", ["Basic YWxpY2U6c2VjcmV0", "Bearer", "Bearer two parts", "Token abc", "é"]
)
@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(2, 60))
def test_malformed_authorization_headers_are_charged_to_the_address(db, clock, authorization):
    for _ in range(2):
        assert initialize_with(authorization).status_code == 401
    with no_writes() as queries:
        assert initialize_with(authorization).status_code == 429
    assert len(queries) == 0


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(1, 60))
def test_a_valid_token_refused_before_authentication_is_charged_to_the_address(alice, clock):
    foreign = {"Origin": "http://evil.example"}
    assert initialize(alice.token, **foreign).status_code == 403
    assert initialize(alice.token, **foreign).status_code == 429
    assert initialize(alice.token).status_code == 200, "its own requests still go through"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(1, 60))
def test_registration_with_an_authorization_header_is_charged(db, clock):
    for authorization in ("Bearer junk", "Basic YWxpY2U6c2VjcmV0"):
        caches_clear()
        first = register(authorization)
        assert first.status_code != 429, first.content
        assert register(authorization).status_code == 429, authorization


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(1, 60))
def test_ipv6_clients_are_counted_per_64_block(db, clock):
    assert initialize(address="2001:db8::1").status_code == 401
    assert initialize(address="2001:db8::2").status_code == 429, "same /64: same budget"
    assert initialize(address="2001:db8:0:1::1").status_code == 401, "another /64"
    assert initialize(address="::ffff:192.0.2.1").status_code == 401
    assert initialize(address="192.0.2.1").status_code == 429, "IPv4-mapped is the IPv4 address"


@override_settings(ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=(1, 60))
def test_the_oauth_endpoints_are_limited_too(db, clock):
    assert Client().post("/oauth/register/", data="{}", content_type="application/json")
    refused = Client().post("/oauth/register/", data="{}", content_type="application/json")
    assert refused.status_code == 429
    assert Client().get("/admin/login/").status_code == 200, "the admin is not counted"


@override_settings(ANCHOR_HTTP_RATE_LIMIT=None, ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS=None)
def test_off_means_no_limit(alice):
    for _ in range(20):
        assert initialize(alice.token).status_code == 200


@pytest.mark.slow
def test_the_stdio_server_is_not_limited(tmp_path):
    env = base_env(
        ANCHOR_DB_PATH=str(tmp_path / "anchor.db"),
        ANCHOR_HTTP_RATE_LIMIT="1/hour",
        ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS="1/hour",
    )

    async def scenario() -> None:
        with open(tmp_path / "stderr.log", "w") as log:
            async with mcp_session(env, log) as (session, _):
                for _ in range(5):
                    result = await session.call_tool("list_collections", {})
                    assert result.structuredContent and result.structuredContent["ok"], result

    asyncio.run(scenario())


def test_rates_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANCHOR_HTTP_RATE_LIMIT", "120/minute")
    assert rate_from_env("ANCHOR_HTTP_RATE_LIMIT", "600/minute") == (120, 60)
    monkeypatch.setenv("ANCHOR_HTTP_RATE_LIMIT", "off")
    assert rate_from_env("ANCHOR_HTTP_RATE_LIMIT", "600/minute") is None
    monkeypatch.delenv("ANCHOR_HTTP_RATE_LIMIT")
    assert rate_from_env("ANCHOR_HTTP_RATE_LIMIT", "600/minute") == (600, 60)
    for bad in ("fast", "10/week", "-1/second", "1.5/hour"):
        monkeypatch.setenv("ANCHOR_HTTP_RATE_LIMIT", bad)
        with pytest.raises(ImproperlyConfigured, match="ANCHOR_HTTP_RATE_LIMIT"):
            rate_from_env("ANCHOR_HTTP_RATE_LIMIT", "600/minute")
