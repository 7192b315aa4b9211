"""System checks for risky team-mode configuration. Errors that matter only for a served
deployment are deploy=True, so they stop gunicorn_conf's start-up, not the stdio server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.core import checks
from django.urls import URLPattern, URLResolver, get_resolver

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1", ".localhost", "testserver"}
# (id, message, hint); the id says whether it is an Error or a Warning.
Problem = tuple[str, str, str]


def _messages(problems: Iterable[Problem]) -> list[checks.CheckMessage]:
    return [
        (checks.Error if check_id.startswith("anchor.E") else checks.Warning)(
            message, hint=hint, id=check_id
        )
        for check_id, message, hint in problems
    ]


def _settings_problems() -> Iterator[Problem]:
    public = [host for host in settings.ALLOWED_HOSTS if host not in LOCAL_HOSTS]
    if settings.DEBUG and public:
        yield (
            "anchor.W001",
            f"DEBUG is on while ALLOWED_HOSTS names public hosts ({', '.join(public)}).",
            "Debug pages show settings and tracebacks to anyone who reaches the server. "
            "Unset DJANGO_DEBUG wherever other people can connect.",
        )
    if "*" in settings.ALLOWED_HOSTS:
        yield (
            "anchor.E002",
            "ALLOWED_HOSTS contains '*'.",
            "The Host check is what stops DNS-rebinding pages from reaching /mcp; list the real "
            "host names instead.",
        )
    if settings.ANCHOR_HTTP_AUTH == "none" and settings.DEBUG:
        yield (
            "anchor.W002",
            "/mcp is mounted without authentication (ANCHOR_HTTP_AUTH=none, DEBUG on).",
            "Anyone who can reach the server acts as ANCHOR_ACTOR_ID in ANCHOR_WORKSPACE_ID. "
            "Keep it to your own machine; use tokens for anything else.",
        )
    elif settings.ANCHOR_HTTP_AUTH == "none":
        yield (
            "anchor.W003",
            "ANCHOR_HTTP_AUTH=none without DEBUG: /mcp is not mounted at all.",
            "An unauthenticated endpoint is only served in DEBUG. Unset ANCHOR_HTTP_AUTH to "
            "serve /mcp with token authentication.",
        )


def _deployment_problems() -> Iterator[Problem]:
    if not settings.ANCHOR_SECRET_KEY_FROM_ENV:
        yield (
            "anchor.E001",
            "SECRET_KEY is not set in the environment.",
            "Without it every process invents its own key, so admin sign-ins break between "
            "workers and restarts. Set SECRET_KEY to a long random value, e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`.",
        )
    if settings.ANCHOR_HTTP_AUTH == "none":
        yield (
            "anchor.E003",
            "ANCHOR_HTTP_AUTH=none in a deployment.",
            "A served deployment authenticates /mcp with tokens; unset ANCHOR_HTTP_AUTH.",
        )
    if not settings.ANCHOR_BEHIND_TLS_PROXY:
        yield (
            "anchor.W010",
            "The server speaks plain http: ANCHOR_BEHIND_TLS_PROXY is off.",
            "Fine for a trial on loopback. Anywhere else, put a TLS-terminating proxy in front "
            "and set ANCHOR_BEHIND_TLS_PROXY=true: sign-in cookies are then sent over TLS only, "
            "plain http is redirected to https, and browsers are told (HSTS) to use https alone.",
        )
    if settings.ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK:
        yield (
            "anchor.W011",
            "ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK is on: client metadata documents may be fetched "
            "from this machine.",
            "It is for tests only. Anyone can name a URL on 127.0.0.1 or ::1 as their client_id "
            "and have this server request it; unset the variable.",
        )


@checks.register(checks.Tags.security)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    return _messages(_settings_problems())


@checks.register(checks.Tags.security, deploy=True)
def check_deployment(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    return _messages(_deployment_problems())


def _patterns(resolver: URLResolver, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


@checks.register(checks.Tags.security, checks.Tags.urls)
def check_stock_mcp_view(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from anchor_site.http.views import AnchorMCPView
    from workflow.mcp.sdk import StreamableHttpView

    return _messages(
        (
            "anchor.E004",
            f"django-mcp-server's own view is routed at {route!r}.",
            "It spins a CPU forever on GET and has no Origin or size checks. Route only "
            "anchor_site.http.views.AnchorMCPView (do not include mcp_server.urls).",
        )
        for route, callback in _patterns(get_resolver())
        if issubclass(view_class := getattr(callback, "view_class", object), StreamableHttpView)
        and not issubclass(view_class, AnchorMCPView)
    )
