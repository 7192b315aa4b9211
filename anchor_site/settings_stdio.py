"""Settings of the stdio server (`manage.py mcp_serve`, which picks this module by default).

It serves one agent over stdio: no HTTP endpoint, no OAuth and no admin pages. So it leaves out
django-mcp-server (whose import pulls in Django REST framework and, through it, psycopg even on
SQLite; the SDK's own FastMCP serves instead, see workflow.mcp.sdk), the OAuth provider and
Anchor's OAuth app (oauthlib, jwcrypto and cryptography at import) and the admin (its package
imports its forms, options and site machinery, and its app config discovers every admin
module): together more than half of its start. Their tables still belong in the database, for
the admin and team mode on the same file: a new SQLite file starts as a copy of a template
migrated with every app (workflow mcp_serve command).
"""

from __future__ import annotations

from anchor_site.settings import *  # noqa: F403
from anchor_site.settings import INSTALLED_APPS

INSTALLED_APPS = [
    app
    for app in INSTALLED_APPS
    if app not in {"django.contrib.admin", "mcp_server", "oauth2_provider", "anchor_site.oauth"}
]
