"""Reads Anchor's configuration from the environment and fails loudly on bad values.

Every error names the variable and says what a good value looks like, because the usual reader
is someone editing an MCP client's JSON configuration, not this code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:  # only the type: the parser itself is imported when a URL is set
    from dj_database_url import DBConfig

WORKSPACE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_ACTOR_ID_LENGTH = 300


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false or yes/no.")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def workspace_id_from_env() -> str:
    value = env_str("ANCHOR_WORKSPACE_ID", "local").strip()
    if not WORKSPACE_ID_PATTERN.match(value):
        raise ImproperlyConfigured(
            f"ANCHOR_WORKSPACE_ID={value!r} is not a valid workspace ID; use 1-64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit (for example 'local')."
        )
    return value


def actor_id_from_env() -> str:
    value = env_str("ANCHOR_ACTOR_ID", "local-agent").strip()
    if not value or len(value) > MAX_ACTOR_ID_LENGTH or any(ord(c) < 32 for c in value):
        raise ImproperlyConfigured(
            f"ANCHOR_ACTOR_ID={value!r} is not a valid actor ID; use 1-{MAX_ACTOR_ID_LENGTH} "
            "printable characters (for example 'local-agent')."
        )
    return value


MAX_QUERY_TIMEOUT_S = 3600.0


def query_timeout_from_env() -> float:
    raw = env_str("ANCHOR_QUERY_TIMEOUT_S", "10").strip() or "10"
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_QUERY_TIMEOUT_S:  # also refuses nan
        raise ImproperlyConfigured(
            f"ANCHOR_QUERY_TIMEOUT_S={raw!r} is not a time limit; use seconds greater than 0 "
            f"and at most {MAX_QUERY_TIMEOUT_S:g} (for example 10 or 2.5)."
        )
    return value


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level_from_env() -> str:
    value = env_str("ANCHOR_LOG_LEVEL", "WARNING").strip().upper()
    if value not in LOG_LEVELS:
        raise ImproperlyConfigured(
            f"ANCHOR_LOG_LEVEL={value!r} is not a log level; use one of {', '.join(LOG_LEVELS)}."
        )
    return value


def sqlite_path_from_env() -> Path:
    raw = env_str("ANCHOR_DB_PATH", "anchor.db").strip()
    if not raw:
        raise ImproperlyConfigured(
            "ANCHOR_DB_PATH is empty; set it to the SQLite file to use (for example "
            "/home/me/anchor.db) or unset it to use anchor.db in the working directory."
        )
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    if path.is_dir():
        raise ImproperlyConfigured(
            f"ANCHOR_DB_PATH={raw!r} is a directory; point it at a file inside it, "
            f"for example {str(path / 'anchor.db')!r}."
        )
    if not path.parent.is_dir():
        raise ImproperlyConfigured(
            f"ANCHOR_DB_PATH={raw!r}: the directory {str(path.parent)!r} does not exist; "
            "create it first or choose another path."
        )
    return path


def conn_max_age_from_env(default: int | None) -> int | None:
    """ANCHOR_DB_CONN_MAX_AGE, set by the ASGI server (anchor_site/asgi.py) to 0; else default."""
    raw = env_str("ANCHOR_DB_CONN_MAX_AGE", "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ImproperlyConfigured(
            f"ANCHOR_DB_CONN_MAX_AGE={raw!r} is not a number of seconds (0 closes each "
            "connection after its request)."
        )
    return int(raw)


def database_from_env() -> DBConfig:
    """DATABASE_URL (PostgreSQL) wins when set; otherwise the embedded SQLite file."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        import dj_database_url

        # psycopg (through the pool module) only when PostgreSQL is the backend: on SQLite
        # its import would be part of every stdio start-up for nothing.
        from anchor_site.db_pool import DEFAULT_POOL_SIZE, DEFAULT_POOL_TIMEOUT_S, pool_options

        if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
            raise ImproperlyConfigured(
                "DATABASE_URL must be a PostgreSQL URL such as "
                "postgres://user:password@host:5432/anchor; unset it to use the SQLite file "
                "named by ANCHOR_DB_PATH."
            )
        # Over HTTP (ANCHOR_DB_CONN_MAX_AGE=0) a pool hands connections out instead.
        conn_max_age = conn_max_age_from_env(600)
        try:
            # A stdio server lives for hours: keep one connection and let Django check it is
            # alive before each use rather than reconnecting (several ms) on every tool call.
            config = dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
        except Exception as exc:  # the parser raises several types; all mean a bad URL
            raise ImproperlyConfigured(f"DATABASE_URL could not be parsed: {exc}") from exc
        if not config.get("NAME"):
            raise ImproperlyConfigured(
                "DATABASE_URL names no database; add one after the host, e.g. .../anchor."
            )
        config.setdefault("TEST", {})
        pool_size = non_negative_int_from_env("ANCHOR_DB_POOL_SIZE", DEFAULT_POOL_SIZE)
        if conn_max_age == 0 and pool_size:
            timeout_s = positive_int_from_env("ANCHOR_DB_POOL_TIMEOUT_S", DEFAULT_POOL_TIMEOUT_S)
            config.setdefault("OPTIONS", {})["pool"] = pool_options(pool_size, timeout_s)
            # Django gives the pool psycopg_pool's check_connection only with health checks
            # on: without it a connection the database closed is handed out and fails calls.
            config["CONN_HEALTH_CHECKS"] = True
        return config
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(sqlite_path_from_env()),
        # Opening the file and running the PRAGMAs costs more than most tool calls; an idle
        # SQLite connection holds no lock, so keep it for the life of the process.
        "CONN_MAX_AGE": conn_max_age_from_env(None),
        "OPTIONS": {
            # BEGIN IMMEDIATE takes the write lock up front, so two writers queue on the busy
            # timeout instead of failing with "database is locked" when a read upgrades.
            "transaction_mode": "IMMEDIATE",
            "timeout": 60,
            # WAL lets readers run beside the writer; synchronous=FULL makes every acknowledged
            # commit survive power loss, not just a process crash.
            "init_command": (
                "PRAGMA journal_mode=WAL;"
                "PRAGMA synchronous=FULL;"
                "PRAGMA foreign_keys=ON;"
                "PRAGMA busy_timeout=60000;"
            ),
        },
    }


def allowed_hosts_from_env() -> list[str]:
    """ALLOWED_HOSTS, refusing "*": the MCP endpoint relies on Host checks against rebinding."""
    hosts = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
    if "*" in hosts:
        raise ImproperlyConfigured(
            "ALLOWED_HOSTS must not contain '*'; list the host names the server answers to, "
            "comma-separated (for example anchor.example.com,127.0.0.1)."
        )
    return hosts


HTTP_AUTH_MODES = ("token", "none")


def http_auth_from_env() -> str:
    value = env_str("ANCHOR_HTTP_AUTH", "token").strip().lower()
    if value not in HTTP_AUTH_MODES:
        raise ImproperlyConfigured(
            f"ANCHOR_HTTP_AUTH={value!r} is not an authentication mode; use 'token' (the "
            "default) or 'none' (only honoured with DJANGO_DEBUG=true)."
        )
    return value


# scheme://host[:port]; any scheme, since desktop apps send their own (e.g. vscode-file://).
ORIGIN_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s?#]+$", re.IGNORECASE)


def allowed_origins_from_env() -> list[str]:
    origins = env_list("ANCHOR_HTTP_ALLOWED_ORIGINS", [])
    for origin in origins:
        if not ORIGIN_PATTERN.match(origin):
            raise ImproperlyConfigured(
                f"ANCHOR_HTTP_ALLOWED_ORIGINS has {origin!r}, which is not an origin; use "
                "scheme://host[:port] with no path, for example https://anchor.example.com."
            )
    return [origin.lower() for origin in origins]


SCHEME_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*$")


def oauth_redirect_schemes_from_env() -> list[str]:
    """Custom URI schemes OAuth clients may redirect to besides http(s), e.g. cursor,vscode."""
    schemes = [scheme.lower() for scheme in env_list("ANCHOR_OAUTH_REDIRECT_SCHEMES", [])]
    for scheme in schemes:
        if not SCHEME_PATTERN.match(scheme) or scheme in {"javascript", "data", "file"}:
            raise ImproperlyConfigured(
                f"ANCHOR_OAUTH_REDIRECT_SCHEMES has {scheme!r}, which is not an acceptable URI "
                "scheme; list bare scheme names, comma-separated (for example cursor,vscode)."
            )
    return schemes


RATE_UNITS = {"second": 1, "minute": 60, "hour": 3600}


def rate_from_env(name: str, default: str) -> tuple[int, int] | None:
    """`<count>/<second|minute|hour>` as (count, window seconds); `off` (or 0) for no limit."""
    raw = env_str(name, default).strip().lower() or default
    if raw in {"off", "0", "none"}:
        return None
    count, _, unit = raw.partition("/")
    if count.isdigit() and int(count) > 0 and unit in RATE_UNITS:
        return int(count), RATE_UNITS[unit]
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a rate; use <count>/<second|minute|hour> (for example "
        "600/minute), or off."
    )


def non_negative_int_from_env(name: str, default: int) -> int:
    raw = env_str(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number (e.g. 4, or 0 for off).")
    return int(raw)


def positive_int_from_env(name: str, default: int) -> int:
    raw = env_str(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a positive whole number (e.g. 30).")
    return int(raw)
