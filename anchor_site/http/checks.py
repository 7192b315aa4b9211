"""System checks for risky team-mode configuration. Errors that matter only for a served
deployment are deploy=True, so they stop gunicorn_conf's start-up, not the stdio server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core import checks
from django.urls import URLPattern, URLResolver, get_resolver

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1", ".localhost", "testserver"}


@checks.register(checks.Tags.security)
def check_debug_on_public_host(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.DEBUG:
        return []
    public = [host for host in settings.ALLOWED_HOSTS if host not in LOCAL_HOSTS]
    if not public:
        return []
    return [
        checks.Warning(
            f"DEBUG is on while ALLOWED_HOSTS names public hosts ({', '.join(public)}).",
            hint="Debug pages show settings and tracebacks to anyone who reaches the server. "
            "Unset DJANGO_DEBUG wherever other people can connect.",
            id="anchor.W001",
        )
    ]


@checks.register(checks.Tags.security)
def check_wildcard_hosts(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if "*" not in settings.ALLOWED_HOSTS:
        return []
    return [
        checks.Error(
            "ALLOWED_HOSTS contains '*'.",
            hint="The Host check is what stops DNS-rebinding pages from reaching /mcp; list "
            "the real host names instead.",
            id="anchor.E002",
        )
    ]


@checks.register(checks.Tags.security)
def check_open_endpoint(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if settings.ANCHOR_HTTP_AUTH != "none":
        return []
    if settings.DEBUG:
        return [
            checks.Warning(
                "/mcp is mounted without authentication (ANCHOR_HTTP_AUTH=none, DEBUG on).",
                hint="Anyone who can reach the server acts as ANCHOR_ACTOR_ID in "
                "ANCHOR_WORKSPACE_ID. Keep it to your own machine; use tokens for anything else.",
                id="anchor.W002",
            )
        ]
    return [
        checks.Warning(
            "ANCHOR_HTTP_AUTH=none without DEBUG: /mcp is not mounted at all.",
            hint="An unauthenticated endpoint is only served in DEBUG. Unset ANCHOR_HTTP_AUTH "
            "to serve /mcp with token authentication.",
            id="anchor.W003",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_deployment(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    if not settings.ANCHOR_SECRET_KEY_FROM_ENV:
        errors.append(
            checks.Error(
                "SECRET_KEY is not set in the environment.",
                hint="Without it every process invents its own key, so admin sign-ins break "
                "between workers and restarts. Set SECRET_KEY to a long random value, e.g. "
                "from `python -c 'import secrets; print(secrets.token_urlsafe(50))'`.",
                id="anchor.E001",
            )
        )
    if settings.ANCHOR_HTTP_AUTH == "none":
        errors.append(
            checks.Error(
                "ANCHOR_HTTP_AUTH=none in a deployment.",
                hint="A served deployment authenticates /mcp with tokens; unset ANCHOR_HTTP_AUTH.",
                id="anchor.E003",
            )
        )
    if settings.ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK:
        errors.append(
            checks.Warning(
                "ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK is on: client metadata documents may be "
                "fetched from this machine.",
                hint="It is for tests only. Anyone can name a URL on 127.0.0.1 or ::1 as their "
                "client_id and have this server request it; unset the variable.",
                id="anchor.W011",
            )
        )
    return errors


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

    errors: list[checks.CheckMessage] = []
    for route, callback in _patterns(get_resolver()):
        view_class = getattr(callback, "view_class", None)
        if (
            isinstance(view_class, type)
            and issubclass(view_class, StreamableHttpView)
            and not issubclass(view_class, AnchorMCPView)
        ):
            errors.append(
                checks.Error(
                    f"django-mcp-server's own view is routed at {route!r}.",
                    hint="It spins a CPU forever on GET and has no Origin or size checks. Route "
                    "only anchor_site.http.views.AnchorMCPView (do not include mcp_server.urls).",
                    id="anchor.E004",
                )
            )
    return errors


@checks.register(checks.Tags.security, deploy=True)
def check_plain_http(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if settings.ANCHOR_BEHIND_TLS_PROXY:
        return []
    return [
        checks.Warning(
            "The server speaks plain http: ANCHOR_BEHIND_TLS_PROXY is off.",
            hint="Fine for a trial on loopback. Anywhere else, put a TLS-terminating proxy in "
            "front and set ANCHOR_BEHIND_TLS_PROXY=true: sign-in cookies are then sent over "
            "TLS only, plain http is redirected to https, and browsers are told (HSTS) to use "
            "https alone.",
            id="anchor.W010",
        )
    ]
