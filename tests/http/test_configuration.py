"""Team-mode configuration: environment parsing, system checks, and when /mcp is mounted."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.urls import URLPattern

from anchor_site import env
from anchor_site.http import checks
from anchor_site.http.views import AnchorMCPView, OpenDebugMCPView
from anchor_site.urls import mcp_urlpatterns
from records.models import AuditEvent
from tests.e2e.server import REPO_ROOT, base_env
from tests.http.conftest import ACCEPT, MCP_URL, McpHttp
from workflow.models import ReviewTicket


def ids(messages) -> list[str]:
    return [message.id for message in messages]


# --- environment ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["*", "anchor.example.com,*"])
def test_wildcard_allowed_hosts_are_refused_at_start_up(monkeypatch, value):
    monkeypatch.setenv("ALLOWED_HOSTS", value)
    with pytest.raises(ImproperlyConfigured, match=r"must not contain '\*'"):
        env.read()


def test_allowed_hosts_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("ALLOWED_HOSTS", "anchor.example.com, 10.0.0.5")
    assert env.read().ALLOWED_HOSTS == ["anchor.example.com", "10.0.0.5"]
    monkeypatch.delenv("ALLOWED_HOSTS")
    assert env.read().ALLOWED_HOSTS == ["localhost", "127.0.0.1", "[::1]"]


def test_http_auth_mode_is_checked(monkeypatch):
    monkeypatch.setenv("ANCHOR_HTTP_AUTH", "None")
    assert env.read().ANCHOR_HTTP_AUTH == "none"
    monkeypatch.setenv("ANCHOR_HTTP_AUTH", "basic")
    with pytest.raises(ImproperlyConfigured, match="ANCHOR_HTTP_AUTH='basic'"):
        env.read()


def test_allowed_origins_must_be_origins(monkeypatch):
    monkeypatch.setenv("ANCHOR_HTTP_ALLOWED_ORIGINS", "https://IDE.example, http://127.0.0.1:3000")
    assert env.read().ANCHOR_HTTP_ALLOWED_ORIGINS == [
        "https://ide.example",
        "http://127.0.0.1:3000",
    ]
    monkeypatch.setenv("ANCHOR_HTTP_ALLOWED_ORIGINS", "https://ide.example/path")
    with pytest.raises(ImproperlyConfigured, match="ANCHOR_HTTP_ALLOWED_ORIGINS=.* not an origin"):
        env.read()


# --- system checks --------------------------------------------------------------------------


def test_project_configuration_passes_the_checks():
    assert checks.check_settings() == []
    assert checks.check_stock_mcp_view() == []


@override_settings(DEBUG=True, ALLOWED_HOSTS=["localhost", "anchor.example.com"])
def test_debug_with_a_public_host_warns():
    messages = checks.check_settings()
    assert ids(messages) == ["anchor.W001"]
    assert "anchor.example.com" in messages[0].msg


@override_settings(DEBUG=True, ALLOWED_HOSTS=["localhost", "127.0.0.1"])
def test_debug_on_loopback_only_is_fine():
    assert checks.check_settings() == []


@override_settings(ALLOWED_HOSTS=["*"])
def test_wildcard_hosts_set_in_code_are_an_error():
    assert ids(checks.check_settings()) == ["anchor.E002"]


@override_settings(ANCHOR_HTTP_AUTH="none", DEBUG=True)
def test_open_endpoint_in_debug_warns():
    assert ids(checks.check_settings()) == ["anchor.W002"]


@override_settings(ANCHOR_HTTP_AUTH="none", DEBUG=False)
def test_open_endpoint_without_debug_warns_that_it_is_not_mounted():
    assert ids(checks.check_settings()) == ["anchor.W003"]


@override_settings(
    ANCHOR_SECRET_KEY_FROM_ENV=False, ANCHOR_HTTP_AUTH="none", ANCHOR_BEHIND_TLS_PROXY=True
)
def test_deploy_checks_refuse_a_missing_secret_key_and_an_open_endpoint():
    assert ids(checks.check_deployment()) == ["anchor.E001", "anchor.E003"]


@override_settings(ANCHOR_SECRET_KEY_FROM_ENV=True, ANCHOR_BEHIND_TLS_PROXY=True)
def test_deploy_checks_pass_with_a_secret_key_and_tokens():
    assert checks.check_deployment() == []


@override_settings(ROOT_URLCONF="tests.http.stock_urls")
def test_routing_the_packages_own_view_is_an_error():
    messages = checks.check_stock_mcp_view()
    assert ids(messages) == ["anchor.E004"]
    assert messages[0].hint is not None and "spins a CPU" in messages[0].hint


# --- mounting -------------------------------------------------------------------------------


def test_token_mode_mounts_the_authenticated_view():
    route, *oauth = mcp_urlpatterns()
    assert oauth, "the OAuth authorization server is mounted beside /mcp"
    assert isinstance(route, URLPattern)
    # as_view() sets view_class on the function it returns; the stubs type it a bare Callable.
    assert route.callback.view_class is AnchorMCPView  # type: ignore[attr-defined]


@override_settings(ANCHOR_HTTP_AUTH="none", DEBUG=False)
def test_no_authentication_and_no_debug_mounts_nothing():
    assert mcp_urlpatterns() == []


@override_settings(ANCHOR_HTTP_AUTH="none", DEBUG=True)
def test_no_authentication_is_mounted_only_in_debug():
    (route,) = mcp_urlpatterns()
    assert isinstance(route, URLPattern)
    # as_view() sets view_class on the function it returns; the stubs type it a bare Callable.
    assert route.callback.view_class is OpenDebugMCPView  # type: ignore[attr-defined]


@override_settings(
    ROOT_URLCONF="tests.http.open_urls",
    ANCHOR_HTTP_AUTH="none",
    DEBUG=True,
    ANCHOR_WORKSPACE_ID="local",
    ANCHOR_ACTOR_ID="local-agent",
)
def test_the_debug_endpoint_uses_the_stdio_scope_and_keeps_the_transport_checks(db):
    connection = McpHttp(Client(), token=None)
    connection.initialize()
    result = connection.ok(
        "discover_collections", {"name": "people", "purpose": "People we work with"}
    )
    ticket = ReviewTicket.objects.get(pk=result["discovery_id"])
    assert (ticket.workspace_id, ticket.actor_id) == ("local", "local-agent")
    foreign = Client().post(
        MCP_URL,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        headers={"Accept": ACCEPT, "Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    assert not AuditEvent.objects.exists()


def test_behind_a_tls_proxy_django_trusts_the_forwarded_scheme():
    script = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)"
    )
    env = base_env(ANCHOR_BEHIND_TLS_PROXY="true", DJANGO_SETTINGS_MODULE="anchor_site.settings")
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["('HTTP_X_FORWARDED_PROTO',", "'https')", "True", "True"]


def test_the_admin_files_are_served_before_collectstatic_without_a_warning(db, tmp_path):
    # WhiteNoise warns at start-up of a STATIC_ROOT not collected yet; the middleware does not.
    with (
        override_settings(STATIC_ROOT=str(tmp_path / "uncollected")),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        response = Client().get("/static/admin/css/base.css")
        response.close()
    assert response.status_code == 200
    assert not [w for w in caught if "No directory at" in str(w.message)]
