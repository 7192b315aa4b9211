"""URL routes: the admin for people, and in team mode /mcp for agents, with the OAuth server and
/agents/ beside it; with ANCHOR_HTTP_AUTH=none, /mcp only while DEBUG is on (anchor.W003)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path

from anchor_site.http.agents import agents_page
from anchor_site.http.views import AnchorMCPView, OpenDebugMCPView


def mcp_urlpatterns() -> list[URLPattern | URLResolver]:
    if settings.ANCHOR_HTTP_AUTH == "token":
        return [
            path("mcp", AnchorMCPView.as_view(), name="mcp"),
            path("agents/", agents_page, name="anchor-agents"),
            path("", include("anchor_site.oauth.urls")),
        ]
    if settings.DEBUG:
        return [path("mcp", OpenDebugMCPView.as_view(), name="mcp")]
    return []


urlpatterns = [path("admin/", admin.site.urls), *mcp_urlpatterns()]

# Every door's clients read JSON: an unanswered error is never Django's HTML page.
handler500 = "anchor_site.http.errors.server_error"
