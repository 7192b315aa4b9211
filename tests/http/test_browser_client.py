"""A browser-based MCP client in real Chromium, on its own origin, against the production server.

The page (tests/http/browser_client/) is served from another loopback port than gunicorn, so
every fetch it makes is cross-origin: the 401's challenge, both metadata documents, dynamic
registration, PKCE with crypto.subtle, the authorization page (a person signs in and allows),
the code exchange, initialize and tools/list with the bearer token, and DELETE of the session.
With the page's origin in ANCHOR_HTTP_ALLOWED_ORIGINS it connects; with nothing configured the
browser blocks it.
Skipped where Playwright or /usr/bin/chromium is absent.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests.admin.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.http.test_live_server import ON_POSTGRES, LiveServer, serve

ASSETS = Path(__file__).parent / "browser_client"
PASSWORD = "a long pass phrase for tests"
CORS_BLOCKED = "blocked by CORS policy"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=ON_POSTGRES),
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no browser at {CHROMIUM}"),
]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # the page's requests are not the test's output


@pytest.fixture
def page_origin() -> Iterator[str]:
    """The client page, served from its own loopback port: another origin than the server's."""
    handler = functools.partial(QuietHandler, directory=str(ASSETS))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def chromium(monkeypatch) -> Iterator[Any]:
    # As in tests/admin/test_browser.py: Playwright's loop runs in this thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
    connections.close_all()


@pytest.fixture
def live_listing_the_page(tmp_path, page_origin) -> Iterator[LiveServer]:
    yield from serve(tmp_path, workers=2, ANCHOR_HTTP_ALLOWED_ORIGINS=page_origin)


@pytest.fixture
def live_listing_nothing(tmp_path) -> Iterator[LiveServer]:
    yield from serve(tmp_path, workers=1)


def add_person(live: LiveServer) -> None:
    """alice in team-a with a password, set up with the operator commands."""
    live.manage("anchor_member", "add", "alice", "team-a", "--create-user")
    live.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        f"u = get_user_model().objects.get(username='alice'); u.set_password({PASSWORD!r}); "
        "u.save()",
    )


def open_client(browser: Any, page_origin: str, live: LiveServer) -> tuple[Any, list[str]]:
    page = browser.new_page()
    page.set_default_timeout(30_000)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.goto(f"{page_origin}/client.html?mcp={live.url}/mcp")
    return page, console


def result_of(page: Any) -> dict[str, Any]:
    page.wait_for_function("window.anchorResult !== undefined")
    return page.evaluate("window.anchorResult")


def test_a_browser_client_on_a_listed_origin_connects_through_oauth(
    chromium, page_origin, live_listing_the_page
):
    live = live_listing_the_page
    add_person(live)
    page, console = open_client(chromium, page_origin, live)

    # The page sent the person here itself, after discovery and registration by fetch.
    page.wait_for_url(f"{live.url}/oauth/sign-in/**")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live.url}/oauth/authorize/**")
    assert "Anchor browser client" in page.inner_text("#content-main h1")
    page.click("input[name=allow]")

    page.wait_for_url(f"{page_origin}/client.html?*code=*")
    result = result_of(page)
    assert result["ok"], f"{result}\n{page.inner_text('#log')}"
    assert result["sessionId"], "Mcp-Session-Id was readable from the page"
    assert result["serverName"] == "anchor"
    assert {"resolve_record", "prepare_write", "commit_write"} <= set(result["tools"])
    assert not [line for line in console if CORS_BLOCKED in line], console
    assert "Traceback" not in live.log.read_text()


def test_the_same_page_is_blocked_when_its_origin_is_not_configured(
    chromium, page_origin, live_listing_nothing
):
    live = live_listing_nothing
    page, console = open_client(chromium, page_origin, live)
    result = result_of(page)
    assert result == {
        "ok": False,
        "step": "401 from /mcp names the resource metadata",
        "error": "TypeError: Failed to fetch",
    }, page.inner_text("#log")
    assert any(CORS_BLOCKED in line for line in console), console

    # Endpoint by endpoint: the public metadata is readable, nothing else is.
    probe = """async ([url, init]) => {
        try { return (await fetch(url, init)).status; } catch (error) { return "blocked"; }
    }"""
    json_post = {"method": "POST", "headers": {"Content-Type": "application/json"}}
    form_post = {"method": "POST", "body": "grant_type=authorization_code&code=x"}
    statuses = {
        path: page.evaluate(probe, [f"{live.url}{path}", init])
        for path, init in [
            ("/.well-known/oauth-protected-resource/mcp", {}),
            ("/.well-known/oauth-authorization-server", {}),
            ("/oauth/register/", {**json_post, "body": "{}"}),
            ("/oauth/token/", form_post),
            ("/mcp", {**json_post, "body": "{}"}),
        ]
    }
    assert statuses == {
        "/.well-known/oauth-protected-resource/mcp": 200,
        "/.well-known/oauth-authorization-server": 200,
        "/oauth/register/": "blocked",
        "/oauth/token/": "blocked",
        "/mcp": "blocked",
    }
