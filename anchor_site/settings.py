"""Django settings for Anchor: one readable module, configured from the environment."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from django.core.management.utils import get_random_secret_key

from anchor_site.env import (
    actor_id_from_env,
    allowed_hosts_from_env,
    allowed_origins_from_env,
    database_from_env,
    env_bool,
    env_str,
    http_auth_from_env,
    log_level_from_env,
    query_timeout_from_env,
    workspace_id_from_env,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# Anchor's own version, from pyproject.toml: what serverInfo.version tells MCP clients.
with (BASE_DIR / "pyproject.toml").open("rb") as _pyproject:
    ANCHOR_VERSION: str = tomllib.load(_pyproject)["project"]["version"]

DEBUG = env_bool("DJANGO_DEBUG", False)
# A per-process random key is safe for the stdio server (it signs nothing that outlives the
# process); the HTTP deployment must set SECRET_KEY, which a system check enforces.
SECRET_KEY = env_str("SECRET_KEY", "") or get_random_secret_key()
ANCHOR_SECRET_KEY_FROM_ENV = bool(env_str("SECRET_KEY", ""))
ALLOWED_HOSTS = allowed_hosts_from_env()  # "*" is refused: Host checks guard /mcp

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_extensions",
    "mcp_server",
    "records",
    "workflow",
    "anchor_site.http",
    "anchor_site.devtools",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Serves the admin's static files (collected at start-up) from the application server.
    "anchor_site.http.static.CollectedStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "anchor_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "anchor_site.wsgi.application"
# `manage.py test` runs the pytest suite (the tests are pytest-django, not unittest).
TEST_RUNNER = "anchor_site.testing.PytestTestRunner"

DATABASES = {"default": database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# WhiteNoise serves the admin's files straight from the apps, so `runserver` without DEBUG (or
# before collectstatic) still shows a styled admin.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT = Path(env_str("ANCHOR_STATIC_ROOT", "") or BASE_DIR / "staticfiles")

# Scope of the stdio server. Over HTTP the authenticated user decides instead.
ANCHOR_WORKSPACE_ID = workspace_id_from_env()
ANCHOR_ACTOR_ID = actor_id_from_env()
# Which tools the MCP server lists: "full" (default), "core" (the everyday path), or a
# comma-separated list of tool names; checked against the tool list at start-up.
ANCHOR_TOOLS = env_str("ANCHOR_TOOLS", "full").strip() or "full"
# The longest any one database statement of a tool call may run (QUERY_TIMEOUT after that).
ANCHOR_QUERY_TIMEOUT_S = query_timeout_from_env()

# Team mode: the MCP endpoint at /mcp (anchor_site/http). "token" authenticates every request
# with an AccessToken; "none" takes the stdio scope above and is only mounted with DEBUG on.
ANCHOR_HTTP_AUTH = http_auth_from_env()
# The SDK's own default (mcp.server.transport_security, 4 MiB). The largest call we accept,
# prepare_import, carries up to 1,000,000 bytes of row data plus titles, keys and links; JSON
# escaping can double non-ASCII text, and this still fits. Larger bodies get 413.
ANCHOR_HTTP_MAX_BODY_BYTES = 4 * 1024 * 1024
# Django reads the whole body at once, and its own cap (2.5 MB) would otherwise answer a bare 400
# below the stated limit. The admin's forms share it; they are signed-in staff only.
DATA_UPLOAD_MAX_MEMORY_SIZE = ANCHOR_HTTP_MAX_BODY_BYTES
# Behind a proxy that terminates TLS and sets X-Forwarded-Proto: trust it (the server binds to
# loopback, so only the proxy can reach it). The admin's CSRF check then sees https, and the
# session and CSRF cookies travel over TLS only.
if env_bool("ANCHOR_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
# Origins accepted besides the server's own, for clients that send an Origin header (desktop
# apps). No CORS headers are sent, so cross-site browser pages stay refused. Others get 403.
ANCHOR_HTTP_ALLOWED_ORIGINS = allowed_origins_from_env()

# Read once by django-mcp-server at import time.
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {
    "name": "anchor",
    "instructions": None,  # filled in by workflow.mcp.instructions at app start-up
}
# The package's "get_server_instructions" tool duplicates the initialize result; agents get the
# instructions there already.
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False

# Everything goes to stderr: stdout of mcp_serve carries JSON-RPC only.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "stream": sys.stderr, "formatter": "plain"}
    },
    "root": {"handlers": ["stderr"], "level": log_level_from_env()},
}
