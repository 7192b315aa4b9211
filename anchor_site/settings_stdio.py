"""Settings of the stdio server (`manage.py mcp_serve`, which picks this module by default).

One agent over stdio needs no HTTP endpoint, OAuth or admin, whose imports (Django REST
framework and psycopg, oauthlib and cryptography, the admin's site machinery) were more than half
of its start; the SDK's own FastMCP serves instead (workflow.mcp.sdk). Their tables still belong
in the database (workflow mcp_serve command).
"""

from __future__ import annotations

from anchor_site.settings import *  # noqa: F403
from anchor_site.settings import INSTALLED_APPS

INSTALLED_APPS = [
    app
    for app in INSTALLED_APPS
    if app not in {"django.contrib.admin", "mcp_server", "oauth2_provider", "anchor_site.oauth"}
]
