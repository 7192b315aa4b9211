"""Reads Anchor's configuration from the environment (pydantic-settings), failing loudly: every
error is one line naming the variable and a good value, for someone editing a client's JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from django.core.exceptions import ImproperlyConfigured
from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:  # the parser itself is imported only when a URL is set
    from dj_database_url import DBConfig

RATE_UNITS = {"second": 1, "minute": 60, "hour": 3600}
# An empty variable means its default, except these, where it is refused.
NOT_EMPTY = {"ANCHOR_WORKSPACE_ID", "ANCHOR_ACTOR_ID", "ANCHOR_LOG_LEVEL", "ANCHOR_DB_PATH"}


def _rate(raw: Any) -> Any:
    """`<count>/<second|minute|hour>` as (count, window seconds); `off` (or 0) for no limit."""
    if not isinstance(raw, str):  # a default
        return raw
    count, _, unit = raw.lower().partition("/")
    if count in {"off", "0", "none"} and not unit:
        return None
    if count.isdigit() and int(count) > 0 and unit in RATE_UNITS:
        return int(count), RATE_UNITS[unit]
    return raw  # refused by the tuple type, with RATE's advice


def _comma_list(lower: bool = False) -> BeforeValidator:
    def split(raw: Any) -> Any:
        if not isinstance(raw, str):  # a default
            return raw
        return [item.strip() for item in (raw.lower() if lower else raw).split(",") if item.strip()]

    return BeforeValidator(split)


def _case(change: Callable[[str], str]) -> BeforeValidator:
    return BeforeValidator(lambda raw: change(raw) if isinstance(raw, str) else raw)


# What a bad value is told; the error reads "NAME='value' <advice>".
BOOL = "is not a boolean; use 1/0, true/false or yes/no."
COUNT = "is not a whole number (e.g. 4, or 0 for off)."
POSITIVE = "is not a positive whole number (e.g. 30)."
RATE = "is not a rate; use <count>/<second|minute|hour> (for example 600/minute), or off."
ADVICE = {  # by variable, where its type's advice is not enough
    "ALLOWED_HOSTS": "must not contain '*'; list the host names the server answers to, "
    "comma-separated (for example anchor.example.com,127.0.0.1).",
    "ANCHOR_WORKSPACE_ID": "is not a valid workspace ID; use 1-64 letters, digits, '.', '_' or "
    "'-', starting with a letter or digit (for example 'local').",
    "ANCHOR_ACTOR_ID": "is not a valid actor ID; use 1-300 printable characters "
    "(for example 'local-agent').",
    "ANCHOR_QUERY_TIMEOUT_S": "is not a time limit; use seconds greater than 0 and at most 3600 "
    "(for example 10 or 2.5).",
    "ANCHOR_HTTP_AUTH": "is not an authentication mode; use 'token' (the default) or 'none' "
    "(only honoured with DJANGO_DEBUG=true).",
    "ANCHOR_HTTP_ALLOWED_ORIGINS": "is not an origin; use scheme://host[:port] with no path, "
    "comma-separated (for example https://anchor.example.com).",
    "ANCHOR_OAUTH_REDIRECT_SCHEMES": "is not an acceptable URI scheme; list bare scheme names, "
    "comma-separated (for example cursor,vscode).",
    "ANCHOR_LOG_LEVEL": "is not a log level; use one of DEBUG, INFO, WARNING, ERROR, CRITICAL.",
}
Bool = Annotated[bool, Field(description=BOOL)]
Count = Annotated[int, Field(ge=0, description=COUNT)]
Positive = Annotated[int, Field(gt=0, description=POSITIVE)]
Rate = Annotated[tuple[int, int] | None, BeforeValidator(_rate), Field(description=RATE)]


class Environment(BaseSettings):
    """Every variable Anchor reads, by its exact name, with its default."""

    model_config = SettingsConfigDict(
        case_sensitive=True, extra="ignore", enable_decoding=False, regex_engine="python-re"
    )

    DJANGO_DEBUG: Bool = False
    SECRET_KEY: str = ""
    # "*" is refused: the MCP endpoint relies on Host checks against DNS rebinding.
    ALLOWED_HOSTS: Annotated[list[Annotated[str, Field(pattern=r"^[^*]+$")]], _comma_list()] = [
        "localhost",
        "127.0.0.1",
        "[::1]",
    ]
    DATABASE_URL: str = ""
    ANCHOR_DB_PATH: str = "anchor.db"  # checked against the file system by database_from_env
    # None: the backend's default, or db_pool's (0 from anchor_site/asgi.py: pooled).
    ANCHOR_DB_CONN_MAX_AGE: Count | None = Field(default=None, description=COUNT)
    ANCHOR_DB_POOL_SIZE: Count = 4
    ANCHOR_DB_POOL_TIMEOUT_S: Positive = 20
    ANCHOR_STATIC_ROOT: str = ""
    ANCHOR_WORKSPACE_ID: str = Field(default="local", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    ANCHOR_ACTOR_ID: str = Field(default="local-agent", pattern=r"^[^\x00-\x1f]{1,300}$")
    ANCHOR_TOOLS: str = "core"
    ANCHOR_QUERY_TIMEOUT_S: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    ANCHOR_FEED_SETTLE_S: Count = 5
    ANCHOR_MEANING: Bool = True
    ANCHOR_HTTP_AUTH: Annotated[Literal["token", "none"], _case(str.lower)] = "token"
    ANCHOR_BEHIND_TLS_PROXY: Bool = False
    ANCHOR_HSTS_SECONDS: Count = 365 * 24 * 60 * 60
    ANCHOR_HSTS_INCLUDE_SUBDOMAINS: Bool = True
    ANCHOR_HSTS_PRELOAD: Bool = False
    ANCHOR_ACTION_RESULT_RETENTION_DAYS: Positive = 30
    ANCHOR_HTTP_RATE_LIMIT: Rate = (600, 60)
    ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS: Rate = (60, 60)
    # scheme://host[:port]; any scheme, since desktop apps send their own (vscode-file://).
    ANCHOR_HTTP_ALLOWED_ORIGINS: Annotated[
        list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9+.-]*://[^/\s?#]+$")]],
        _comma_list(lower=True),
    ] = []
    # Custom URI schemes OAuth clients may redirect to besides http(s), e.g. cursor,vscode.
    ANCHOR_OAUTH_REDIRECT_SCHEMES: Annotated[
        list[Annotated[str, Field(pattern=r"^(?!(javascript|data|file)$)[a-z][a-z0-9+.-]*$")]],
        _comma_list(lower=True),
    ] = []
    ANCHOR_OAUTH_CIMD: Bool = True
    ANCHOR_OAUTH_CIMD_TIMEOUT_S: Positive = 5
    ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK: Bool = False
    ANCHOR_OAUTH_REGISTRATION_RATE: Rate = (10, 3600)
    ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS: Count = 1000
    ANCHOR_OAUTH_UNUSED_CLIENT_DAYS: Positive = 7
    ANCHOR_LOG_LEVEL: Annotated[
        Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], _case(str.upper)
    ] = "WARNING"

    @field_validator("*", mode="before")
    @classmethod
    def _strip(cls, raw: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        if isinstance(raw, str) and not raw.strip() and name not in NOT_EMPTY:
            return cls.model_fields[name].default
        return raw.strip() if isinstance(raw, str) else raw


def read() -> Environment:
    try:
        return Environment()
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0])
        advice = ADVICE.get(name) or Environment.model_fields[name].description or error["msg"]
        raise ImproperlyConfigured(f"{name}={error['input']!r} {advice}") from None


def sqlite_path(raw: str) -> Path:
    if not raw:  # stripped, and kept empty (NOT_EMPTY), by Environment
        raise ImproperlyConfigured(
            "ANCHOR_DB_PATH is empty; set it to the SQLite file to use (for example "
            "/home/me/anchor.db) or unset it to use anchor.db in the working directory."
        )
    path = Path.cwd() / Path(raw).expanduser()  # an absolute path stays as it is
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

        # psycopg (through the pool module) only for PostgreSQL, not in every SQLite start.
        from anchor_site.db_pool import pool_options

        if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
            raise ImproperlyConfigured(
                "DATABASE_URL must be a PostgreSQL URL such as "
                "postgres://user:password@host:5432/anchor; unset it to use the SQLite file "
                "named by ANCHOR_DB_PATH."
            )
        conn_max_age = 600 if env.ANCHOR_DB_CONN_MAX_AGE is None else env.ANCHOR_DB_CONN_MAX_AGE
        try:
            # A stdio server keeps one connection, checked alive before each use.
            config = dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
        except Exception as exc:  # the parser raises several types; all mean a bad URL
            raise ImproperlyConfigured(f"DATABASE_URL could not be parsed: {exc}") from exc
        if not config.get("NAME"):
            raise ImproperlyConfigured(
                "DATABASE_URL names no database; add one after the host, e.g. .../anchor."
            )
        config.setdefault("TEST", {})
        if conn_max_age == 0 and env.ANCHOR_DB_POOL_SIZE:
            pool = pool_options(env.ANCHOR_DB_POOL_SIZE, env.ANCHOR_DB_POOL_TIMEOUT_S)
            config.setdefault("OPTIONS", {})["pool"] = pool
            # Only then does the pool check a connection before handing it out.
            config["CONN_HEALTH_CHECKS"] = True
        return config
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(sqlite_path(env.ANCHOR_DB_PATH)),
        # Opening costs more than most tool calls, and an idle connection holds no lock.
        "CONN_MAX_AGE": env.ANCHOR_DB_CONN_MAX_AGE,
        "OPTIONS": {
            # Writers queue on the busy timeout instead of failing when a read upgrades.
            "transaction_mode": "IMMEDIATE",
            "timeout": 60,
            # Readers beside the writer; every acknowledged commit survives power loss.
            "init_command": (
                "PRAGMA journal_mode=WAL;"
                "PRAGMA synchronous=FULL;"
                "PRAGMA foreign_keys=ON;"
                "PRAGMA busy_timeout=60000;"
            ),
        },
    }
