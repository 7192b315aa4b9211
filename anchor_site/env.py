"""Reads Anchor's configuration from the environment (pydantic-settings), failing loudly.

Every error names the variable and says what a good value looks like, because the usual reader
is someone editing an MCP client's JSON configuration, not this code. An empty variable means
its default, except the four whose emptiness is refused (`NOT_EMPTY`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from django.core.exceptions import ImproperlyConfigured
from pydantic import BeforeValidator, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:  # only the type: the parser itself is imported when a URL is set
    from dj_database_url import DBConfig

MAX_ACTOR_ID_LENGTH = 300
MAX_QUERY_TIMEOUT_S = 3600.0
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
RATE_UNITS = {"second": 1, "minute": 60, "hour": 3600}
WORKSPACE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# scheme://host[:port]; any scheme, since desktop apps send their own (e.g. vscode-file://).
ORIGIN_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s?#]+$", re.IGNORECASE)
SCHEME_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*$")
NOT_EMPTY = {"ANCHOR_WORKSPACE_ID", "ANCHOR_ACTOR_ID", "ANCHOR_LOG_LEVEL", "ANCHOR_DB_PATH"}


def parsed(parse: Callable[[str], Any], fix: str) -> BeforeValidator:
    """`parse` takes the stripped text and returns the value, or None for a bad one; `fix` ends
    the error message after "NAME='value' "."""

    def validate(raw: Any) -> Any:
        if not isinstance(raw, str):  # a default, or already parsed
            return raw
        value = parse(raw.strip())
        if value is None:
            raise ValueError(fix)
        return value

    return BeforeValidator(validate)


def comma_list(check: Callable[[str], bool], fix: str, *, lower: bool = False) -> BeforeValidator:
    def parse(text: str) -> list[str] | None:
        items = [item.strip() for item in (text.lower() if lower else text).split(",")]
        items = [item for item in items if item]
        return items if all(check(item) for item in items) else None

    return parsed(parse, fix)


def _rate(raw: Any) -> tuple[int, int] | None:
    """`<count>/<second|minute|hour>` as (count, window seconds); `off` (or 0) for no limit."""
    if not isinstance(raw, str):
        return raw  # type: ignore[no-any-return]
    text = raw.strip().lower()
    if text in {"off", "0", "none"}:
        return None
    count, _, unit = text.partition("/")
    if count.isdigit() and int(count) > 0 and unit in RATE_UNITS:
        return int(count), RATE_UNITS[unit]
    raise ValueError(
        "is not a rate; use <count>/<second|minute|hour> (for example 600/minute), or off."
    )


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= MAX_QUERY_TIMEOUT_S and not math.isnan(value) else None


Bool = Annotated[
    bool,
    parsed(
        lambda text: {"1": True, "true": True, "yes": True, "on": True}.get(
            text.lower(), {"0": False, "false": False, "no": False, "off": False}.get(text.lower())
        ),
        "is not a boolean; use 1/0, true/false or yes/no.",
    ),
]
COUNT = parsed(lambda t: int(t) if t.isdigit() else None, "is not a whole number (e.g. 4).")
POSITIVE = parsed(
    lambda t: int(t) or None if t.isdigit() else None, "is not a positive whole number (e.g. 30)."
)
Count = Annotated[int, COUNT]
PositiveCount = Annotated[int, POSITIVE]
Rate = Annotated[tuple[int, int] | None, BeforeValidator(_rate)]


class Environment(BaseSettings):
    """Every variable Anchor reads, by its exact name, with its default."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", enable_decoding=False)

    DJANGO_DEBUG: Bool = False
    SECRET_KEY: str = ""
    # "*" is refused: the MCP endpoint relies on Host checks against DNS rebinding.
    ALLOWED_HOSTS: Annotated[
        list[str],
        comma_list(
            lambda host: host != "*",
            "must not contain '*'; list the host names the server answers to, comma-separated "
            "(for example anchor.example.com,127.0.0.1).",
        ),
    ] = ["localhost", "127.0.0.1", "[::1]"]
    DATABASE_URL: str = ""
    ANCHOR_DB_PATH: str = "anchor.db"  # checked against the file system by database_from_env
    # Set by the ASGI server (anchor_site/asgi.py) to 0; else the backend's default.
    ANCHOR_DB_CONN_MAX_AGE: Annotated[
        int | None,
        parsed(
            lambda t: int(t) if t.isdigit() else None,
            "is not a number of seconds (0 closes each connection after its request).",
        ),
    ] = None
    # None: anchor_site.db_pool's defaults (imported only for PostgreSQL).
    ANCHOR_DB_POOL_SIZE: Annotated[int | None, COUNT] = None
    ANCHOR_DB_POOL_TIMEOUT_S: Annotated[int | None, POSITIVE] = None
    ANCHOR_STATIC_ROOT: str = ""
    ANCHOR_WORKSPACE_ID: Annotated[
        str,
        parsed(
            lambda t: t if WORKSPACE_ID_PATTERN.match(t) else None,
            "is not a valid workspace ID; use 1-64 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit (for example 'local').",
        ),
    ] = "local"
    ANCHOR_ACTOR_ID: Annotated[
        str,
        parsed(
            lambda t: t if 0 < len(t) <= MAX_ACTOR_ID_LENGTH and min(t) >= " " else None,
            f"is not a valid actor ID; use 1-{MAX_ACTOR_ID_LENGTH} printable characters (for "
            "example 'local-agent').",
        ),
    ] = "local-agent"
    ANCHOR_TOOLS: str = "full"
    ANCHOR_QUERY_TIMEOUT_S: Annotated[
        float,
        parsed(
            _seconds,
            f"is not a time limit; use seconds greater than 0 and at most "
            f"{MAX_QUERY_TIMEOUT_S:g} (for example 10 or 2.5).",
        ),
    ] = 10.0
    ANCHOR_FEED_SETTLE_S: Count = 5
    ANCHOR_MEANING: Bool = True
    ANCHOR_HTTP_AUTH: Annotated[
        str,
        parsed(
            lambda t: t.lower() if t.lower() in ("token", "none") else None,
            "is not an authentication mode; use 'token' (the default) or 'none' (only "
            "honoured with DJANGO_DEBUG=true).",
        ),
    ] = "token"
    ANCHOR_BEHIND_TLS_PROXY: Bool = False
    ANCHOR_HSTS_SECONDS: Count = 365 * 24 * 60 * 60
    ANCHOR_HSTS_INCLUDE_SUBDOMAINS: Bool = True
    ANCHOR_HSTS_PRELOAD: Bool = False
    ANCHOR_ACTION_RESULT_RETENTION_DAYS: PositiveCount = 30
    ANCHOR_HTTP_RATE_LIMIT: Rate = (600, 60)
    ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS: Rate = (60, 60)
    ANCHOR_HTTP_ALLOWED_ORIGINS: Annotated[
        list[str],
        comma_list(
            lambda origin: bool(ORIGIN_PATTERN.match(origin)),
            "is not a list of origins; use scheme://host[:port] with no path, comma-separated "
            "(for example https://anchor.example.com).",
            lower=True,
        ),
    ] = []
    # Custom URI schemes OAuth clients may redirect to besides http(s), e.g. cursor,vscode.
    ANCHOR_OAUTH_REDIRECT_SCHEMES: Annotated[
        list[str],
        comma_list(
            lambda s: bool(SCHEME_PATTERN.match(s)) and s not in {"javascript", "data", "file"},
            "is not a list of acceptable URI schemes; list bare scheme names, comma-separated "
            "(for example cursor,vscode).",
            lower=True,
        ),
    ] = []
    ANCHOR_OAUTH_CIMD: Bool = True
    ANCHOR_OAUTH_CIMD_TIMEOUT_S: PositiveCount = 5
    ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK: Bool = False
    ANCHOR_OAUTH_REGISTRATION_RATE: Rate = (10, 3600)
    ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS: Count = 1000
    ANCHOR_OAUTH_UNUSED_CLIENT_DAYS: PositiveCount = 7
    ANCHOR_LOG_LEVEL: Annotated[
        str,
        parsed(
            lambda t: t.upper() if t.upper() in LOG_LEVELS else None,
            f"is not a log level; use one of {', '.join(LOG_LEVELS)}.",
        ),
    ] = "WARNING"

    @field_validator("*", mode="before")
    @classmethod
    def _empty_means_default(cls, raw: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        if isinstance(raw, str) and not raw.strip() and name not in NOT_EMPTY:
            return cls.model_fields[name].default
        return raw


def read() -> Environment:
    try:
        return Environment()
    except ValidationError as exc:
        error = exc.errors()[0]
        fix = error.get("ctx", {}).get("error", error["msg"])
        raise ImproperlyConfigured(f"{error['loc'][0]}={error['input']!r} {fix}") from None


def sqlite_path(raw: str) -> Path:
    if not raw.strip():
        raise ImproperlyConfigured(
            "ANCHOR_DB_PATH is empty; set it to the SQLite file to use (for example "
            "/home/me/anchor.db) or unset it to use anchor.db in the working directory."
        )
    path = Path(raw.strip()).expanduser()
    path = path if path.is_absolute() else Path.cwd() / path
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


def database_from_env(env: Environment) -> DBConfig:
    """DATABASE_URL (PostgreSQL) wins when set; otherwise the embedded SQLite file."""
    url = env.DATABASE_URL.strip()
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
        conn_max_age = 600 if env.ANCHOR_DB_CONN_MAX_AGE is None else env.ANCHOR_DB_CONN_MAX_AGE
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
        pool_size = env.ANCHOR_DB_POOL_SIZE
        pool_size = DEFAULT_POOL_SIZE if pool_size is None else pool_size
        if conn_max_age == 0 and pool_size:
            timeout_s = env.ANCHOR_DB_POOL_TIMEOUT_S or DEFAULT_POOL_TIMEOUT_S
            config.setdefault("OPTIONS", {})["pool"] = pool_options(pool_size, timeout_s)
            # Django gives the pool psycopg_pool's check_connection only with health checks
            # on: without it a connection the database closed is handed out and fails calls.
            config["CONN_HEALTH_CHECKS"] = True
        return config
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(sqlite_path(env.ANCHOR_DB_PATH)),
        # Opening the file and running the PRAGMAs costs more than most tool calls; an idle
        # SQLite connection holds no lock, so keep it for the life of the process.
        "CONN_MAX_AGE": env.ANCHOR_DB_CONN_MAX_AGE,
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
