"""Django settings for Anchor: one readable module, configured from the environment."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from django.core.management.utils import get_random_secret_key

from anchor_site import env

_env = env.read()
BASE_DIR = Path(__file__).resolve().parent.parent
# serverInfo.version, from pyproject.toml.
with (BASE_DIR / "pyproject.toml").open("rb") as _pyproject:
    ANCHOR_VERSION: str = tomllib.load(_pyproject)["project"]["version"]

DEBUG = _env.DJANGO_DEBUG
# Random per process is safe for stdio; a system check makes the HTTP deployment set one.
SECRET_KEY = _env.SECRET_KEY or get_random_secret_key()
ANCHOR_SECRET_KEY_FROM_ENV = bool(_env.SECRET_KEY)
ALLOWED_HOSTS = _env.ALLOWED_HOSTS  # "*" is refused: Host checks guard /mcp

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_extensions",
    "mcp_server",
    "oauth2_provider",
    # After the toolkit: its admin.py replaces the toolkit's admin with workspace-scoped ones.
    "anchor_site.oauth",
    "corsheaders",  # its system checks vet the CORS_* settings below
    "records",
    "workflow",
    "anchor_site.http",
    # The developer tools (benchmarks, walkthrough) are installed by anchor_site.settings_dev.
]
# The stdio server leaves out the HTTP, OAuth and admin apps: anchor_site/settings_stdio.py.

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before anything that answers on its own (429 included), so those replies carry CORS.
    "anchor_site.http.cors.ListedOriginsCorsMiddleware",
    "anchor_site.http.static.CollectedStaticMiddleware",
    # Before sessions and authentication: an over-limit request costs no database work.
    "anchor_site.http.ratelimit.RateLimitMiddleware",
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
TEST_RUNNER = "tests.runner.PytestTestRunner"

DATABASES = {"default": env.database_from_env(_env)}
# Connections a process may hold (4, ANCHOR_DB_POOL_SIZE's default, when there is no pool).
_pool_size = DATABASES["default"].get("OPTIONS", {}).get("pool", {}).get("max_size", 4)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

TIME_ZONE = "UTC"

STATIC_URL = "static/"
# WhiteNoise serves the admin's files from the apps, even before collectstatic.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT = Path(_env.ANCHOR_STATIC_ROOT or BASE_DIR / "staticfiles")

# Scope of the stdio server. Over HTTP the authenticated user decides instead.
ANCHOR_WORKSPACE_ID = _env.ANCHOR_WORKSPACE_ID
ANCHOR_ACTOR_ID = _env.ANCHOR_ACTOR_ID
# Which tools are listed: "core" (default), "full", or a comma-separated list of tool names.
ANCHOR_TOOLS = _env.ANCHOR_TOOLS.strip() or "core"
ANCHOR_QUERY_TIMEOUT_S = _env.ANCHOR_QUERY_TIMEOUT_S
# PostgreSQL's change feed leaves out younger events (commits out of ID order).
ANCHOR_FEED_SETTLE_S = _env.ANCHOR_FEED_SETTLE_S
ANCHOR_MEANING = _env.ANCHOR_MEANING

# Team mode's /mcp: "token" authenticates every request; "none" (DEBUG only) takes the stdio scope.
ANCHOR_HTTP_AUTH = _env.ANCHOR_HTTP_AUTH
# The SDK's own default; prepare_import's 1,000,000 bytes of rows fit, escaped. Larger get 413.
ANCHOR_HTTP_MAX_BODY_BYTES = 4 * 1024 * 1024
# Otherwise Django's 2.5 MB cap would answer a bare 400 below the stated limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = ANCHOR_HTTP_MAX_BODY_BYTES
# Behind a TLS-terminating proxy (the server binds to loopback): trust X-Forwarded-Proto/-For
# (anchor_site/http/worker.py), TLS-only cookies, redirect plain http, and send HSTS.
ANCHOR_BEHIND_TLS_PROXY = _env.ANCHOR_BEHIND_TLS_PROXY
if ANCHOR_BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = _env.ANCHOR_HSTS_SECONDS
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env.ANCHOR_HSTS_INCLUDE_SUBDOMAINS
    SECURE_HSTS_PRELOAD = _env.ANCHOR_HSTS_PRELOAD
ANCHOR_ACTION_RESULT_RETENTION_DAYS = _env.ANCHOR_ACTION_RESULT_RETENTION_DAYS
# Requests per bearer credential, and per address without an accepted one (429 + Retry-After).
ANCHOR_HTTP_RATE_LIMIT = _env.ANCHOR_HTTP_RATE_LIMIT
ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS = _env.ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # The rate limiter's counters (anchor_site.http.ratelimit); per process unless shared.
    "ratelimit": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "anchor-ratelimit",
        # Past MAX_ENTRIES counters are dropped: too few would let addresses reset each other's.
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
}
# Origins accepted besides the server's own; /mcp answers any other Origin 403.
ANCHOR_HTTP_ALLOWED_ORIGINS = _env.ANCHOR_HTTP_ALLOWED_ORIGINS
# CORS (anchor_site/http/cors.py) for the listed origins on the endpoints a browser client
# fetches; the OAuth metadata documents are public to any origin; pages a person opens get none.
CORS_ALLOWED_ORIGINS = ANCHOR_HTTP_ALLOWED_ORIGINS
CORS_URLS_REGEX = r"^/(mcp|oauth/(register|token|revoke)/)$"
CORS_ALLOW_METHODS = ["GET", "POST", "DELETE", "OPTIONS"]
CORS_ALLOW_HEADERS = [
    "accept",
    "authorization",
    "content-type",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
    "x-anchor-workspace",
]
CORS_EXPOSE_HEADERS = ["Mcp-Session-Id", "WWW-Authenticate", "Retry-After"]
# Bearer tokens only: cookies (the admin's session) never ride along on a cross-origin call.
CORS_ALLOW_CREDENTIALS = False

# --- OAuth 2.1 for /mcp (anchor_site/oauth), as the MCP authorization spec describes it --------
# Any active user with a password signs in there, not only admin staff.
LOGIN_URL = "oauth2_provider:sign-in"
OAUTH2_PROVIDER = {
    "SCOPES": {"mcp": "Read and write records in your Anchor workspaces through its MCP tools"},
    "DEFAULT_SCOPES": ["mcp"],
    "OAUTH2_VALIDATOR_CLASS": "anchor_site.oauth.validator.AnchorOAuth2Validator",
    # Authorization code with PKCE, S256 only; no implicit or password grant (OAuth 2.1).
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,  # never in the query string
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,  # only digests are stored, as for our tokens
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207: the redirect names the issuer
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",  # public clients (desktop apps, CLIs) registered with PKCE
        "client_secret_basic",
        "client_secret_post",
    ],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Anchor",
    # A refresh token is used once; a replayed old one revokes the whole family.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 60 * 60,
    "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 60 * 60,
    # Open dynamic client registration (RFC 7591), as MCP clients expect; consent still asked.
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 90 * 24 * 60 * 60,
    # Native clients' loopback ports vary (RFC 8252 §7.3); plain http only to loopback.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": [
        "http",
        "https",
        *_env.ANCHOR_OAUTH_REDIRECT_SCHEMES,
    ],
    "REQUEST_APPROVAL_PROMPT": "force",
    # Client ID Metadata Documents (anchor_site.oauth.client_metadata).
    "CIMD_ENABLED": _env.ANCHOR_OAUTH_CIMD,
    "CIMD_METADATA_FETCHER": "anchor_site.oauth.client_metadata.MetadataFetcher",
    "CIMD_REGISTRATION_PERMISSION_CLASSES": (
        "anchor_site.oauth.client_metadata.NewClientPermission",
    ),
    # Fewer than the pooled connections: requests waiting on fetches must not crowd it out.
    "CIMD_MAX_CONCURRENT_FETCHES": max(1, _pool_size // 2),
    "CIMD_FETCH_TIMEOUT_SECONDS": _env.ANCHOR_OAUTH_CIMD_TIMEOUT_S,
    "CIMD_MAX_DOCUMENT_SIZE": 16 * 1024,
    "CIMD_METADATA_MIN_AGE_SECONDS": 5 * 60,
    "CIMD_METADATA_MAX_AGE_SECONDS": 24 * 60 * 60,
    "CIMD_FAILURE_BACKOFF_SECONDS": 60,
}
# For tests only: lets a metadata document be served from this machine (still over https).
ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK = _env.ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK
# New clients per address, and the most clients no one owns (0: no cap); see anchor_site.oauth.
ANCHOR_OAUTH_REGISTRATION_RATE = _env.ANCHOR_OAUTH_REGISTRATION_RATE
ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS = _env.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS
ANCHOR_OAUTH_UNUSED_CLIENT_DAYS = _env.ANCHOR_OAUTH_UNUSED_CLIENT_DAYS

# W008: registration limits http callbacks to loopback. W021: preloading is a per-domain
# submission; ANCHOR_HSTS_PRELOAD adds the directive once you mean to submit.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008", "security.W021"]
if not ANCHOR_BEHIND_TLS_PROXY:
    # Plain http: anchor.W010 says so once, naming the one setting that fixes all four.
    SILENCED_SYSTEM_CHECKS += ["security.W004", "security.W008", "security.W012", "security.W016"]

DJANGO_MCP_GLOBAL_SERVER_CONFIG = {
    "name": "anchor",
    "instructions": None,  # filled in by workflow.mcp.instructions at app start-up
}
# Its "get_server_instructions" tool repeats the initialize result.
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False

# Everything goes to stderr: stdout of mcp_serve carries JSON-RPC only.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "stream": sys.stderr, "formatter": "plain"}
    },
    # A refused Host header is the client's mistake: one WARNING line, not an ERROR traceback.
    "filters": {"one_line_warning": {"()": "anchor_site.http.security_log.OneLineWarning"}},
    "loggers": {"django.security.DisallowedHost": {"filters": ["one_line_warning"]}},
    "root": {"handlers": ["stderr"], "level": _env.ANCHOR_LOG_LEVEL},
}
