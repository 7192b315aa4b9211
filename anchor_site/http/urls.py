"""The /mcp route, decided from settings: with token authentication (the default) mounted with the
OAuth server and /agents/ beside it; without, only while DEBUG is on (anchor.W003 says why).
"""

from __future__ import annotations

from django.conf import settings
from django.urls import URLPattern, URLResolver, path

from anchor_site.http.agents import agents_page
from anchor_site.http.views import AnchorMCPView, OpenDebugMCPView
from anchor_site.oauth.urls import oauth_urlpatterns


def mcp_urlpatterns() -> list[URLPattern | URLResolver]:
    if settings.ANCHOR_HTTP_AUTH == "token":
        return [
            path("mcp", AnchorMCPView.as_view(), name="mcp"),
            path("agents/", agents_page, name="anchor-agents"),
            *oauth_urlpatterns(),
        ]
    if settings.DEBUG:
        return [path("mcp", OpenDebugMCPView.as_view(), name="mcp")]
    return []
