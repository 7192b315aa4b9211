"""Rate limits on team mode's HTTP endpoints: per valid credential, and per address for the rest.

Each limit answers 429 with Retry-After; another token or address is not affected; the window
passing lifts it; the stdio server knows nothing of it. Against the production server: a forged
X-Forwarded-For, made-up bearers and registration with any Authorization header are all charged
to the address, and a valid token keeps working while its address is flooded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from anchor_site import env
from anchor_site.http import ratelimit
from tests.e2e.server import base_env, mcp_session
from tests.http.conftest import MCP_URL, PROTOCOL_VERSION, no_writes
from tests.http.live_servers import THROUGH_PROXY, client_from, start
from tests.http.test_live_server import ON_POSTGRES, LiveServer

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
    monkeypatch.setattr(time, "time", lambda: now["t"])
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
@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
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
    assert env.read().ANCHOR_HTTP_RATE_LIMIT == (120, 60)
    monkeypatch.setenv("ANCHOR_HTTP_RATE_LIMIT", "off")
    assert env.read().ANCHOR_HTTP_RATE_LIMIT is None
    monkeypatch.delenv("ANCHOR_HTTP_RATE_LIMIT")
    assert env.read().ANCHOR_HTTP_RATE_LIMIT == (600, 60)
    for bad in ("fast", "10/week", "-1/second", "1.5/hour"):
        monkeypatch.setenv("ANCHOR_HTTP_RATE_LIMIT", bad)
        with pytest.raises(ImproperlyConfigured, match="ANCHOR_HTTP_RATE_LIMIT"):
            env.read()


# --- against the production server ------------------------------------------------------------

LIVE_LIMIT = 6
LIVE_ENV = {"ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS": f"{LIVE_LIMIT}/hour"}
LIVE_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def live_direct(tmp_path) -> Iterator[LiveServer]:
    """One worker (so one process counts), no proxy in front."""
    yield from start(tmp_path, **LIVE_ENV)


@pytest.fixture
def live_behind_proxy(tmp_path) -> Iterator[LiveServer]:
    yield from start(tmp_path, ANCHOR_BEHIND_TLS_PROXY="true", **LIVE_ENV)


def statuses(client: httpx.Client, url: str, headers: list[dict[str, str]]) -> list[int]:
    return [client.post(f"{url}/mcp", json=INITIALIZE, headers=h).status_code for h in headers]


@pytest.mark.slow
@pytest.mark.django_db(transaction=ON_POSTGRES)
def test_the_served_limits_cannot_be_stepped_around(live_direct: LiveServer):
    url = live_direct.url
    # A forged X-Forwarded-For is not believed without the proxy setting, even from loopback
    # (uvicorn's default trusts it there): one address, one budget.
    with client_from("127.0.0.1", **LIVE_HEADERS) as forger:
        forged = [{"X-Forwarded-For": f"198.51.100.{n}"} for n in range(LIVE_LIMIT + 1)]
        assert statuses(forger, url, forged) == [401] * LIVE_LIMIT + [429]

    # Made-up bearers, and headers that are no bearer at all, spend the address.
    with client_from("127.0.0.3", **LIVE_HEADERS) as prober:
        junk = [{"Authorization": f"Bearer made-up-{n}"} for n in range(LIVE_LIMIT - 2)]
        junk += [{"Authorization": "Basic YWxpY2U6c2VjcmV0"}, {"Authorization": "Bearer a b"}]
        assert statuses(prober, url, junk) == [401] * LIVE_LIMIT
        assert statuses(prober, url, [{"Authorization": "Bearer made-up-new"}]) == [429]

    # Registration is charged whatever Authorization header it carries.
    with client_from("127.0.0.4", Authorization="Bearer anything") as registrar:
        answers = [
            registrar.post(f"{url}/oauth/register/", json=REGISTRATION).status_code
            for _ in range(LIVE_LIMIT + 1)
        ]
    assert 429 in answers and answers.index(429) <= LIVE_LIMIT, answers
    assert all(status == 429 for status in answers[answers.index(429) :]), answers

    # Someone floods bad tokens "from" the victim's address; the victim's token still works.
    victim = live_direct.token_for("victim", "team-a")
    with client_from("127.0.0.5", **LIVE_HEADERS) as shared:
        flood = [{"Authorization": f"Bearer stolen-guess-{n}"} for n in range(LIVE_LIMIT + 3)]
        assert statuses(shared, url, flood)[-3:] == [429] * 3
        own = [{"Authorization": f"Bearer {victim}"}] * 3
        assert statuses(shared, url, own) == [200] * 3
        assert statuses(shared, url, [{}]) == [429], "the flood did spend the address"
    assert "Traceback" not in live_direct.log.read_text()


@pytest.mark.slow
@pytest.mark.django_db(transaction=ON_POSTGRES)
def test_behind_the_proxy_each_forwarded_client_has_its_own_budget(live_behind_proxy):
    url = live_behind_proxy.url
    # The proxy (here, loopback) appends the address it saw; anything before it is the client's.
    with client_from("127.0.0.1", **LIVE_HEADERS, **THROUGH_PROXY) as proxy:
        first = [{"X-Forwarded-For": "203.0.113.7"}] * LIVE_LIMIT
        first += [{"X-Forwarded-For": "198.51.100.1, 203.0.113.7"}]  # a hop the client forged
        assert statuses(proxy, url, first) == [401] * LIVE_LIMIT + [429]
        assert statuses(proxy, url, [{"X-Forwarded-For": "203.0.113.8"}]) == [401]
