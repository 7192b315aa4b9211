"""Configuration from the environment: defaults, loud failures, and SQLite options in effect."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction
from django.db.utils import ConnectionHandler

from anchor_site import env

ANCHOR_VARIABLES = (
    "ANCHOR_DB_PATH",
    "DATABASE_URL",
    "ANCHOR_WORKSPACE_ID",
    "ANCHOR_ACTOR_ID",
    "ANCHOR_LOG_LEVEL",
    "DJANGO_DEBUG",
    "ALLOWED_HOSTS",
    "ANCHOR_DB_CONN_MAX_AGE",
    "ANCHOR_DB_POOL_SIZE",
    "ANCHOR_DB_POOL_TIMEOUT_S",
)


@pytest.fixture
def clean_env(monkeypatch, tmp_path) -> pytest.MonkeyPatch:
    """No Anchor variable set, working directory a fresh temp dir."""
    for name in ANCHOR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def database() -> Any:
    return env.database_from_env(env.read())


def test_defaults(clean_env, tmp_path):
    values = env.read()
    assert values.ANCHOR_WORKSPACE_ID == "local"
    assert values.ANCHOR_ACTOR_ID == "local-agent"
    assert values.ANCHOR_LOG_LEVEL == "WARNING"
    assert values.DJANGO_DEBUG is False
    assert values.ALLOWED_HOSTS == ["localhost", "127.0.0.1", "[::1]"]
    database = env.database_from_env(values)
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert Path(database["NAME"]) == tmp_path / "anchor.db"


def test_values_are_read_and_normalised(clean_env, tmp_path):
    (tmp_path / "data").mkdir()
    clean_env.setenv("ANCHOR_WORKSPACE_ID", "team-a.v2")
    clean_env.setenv("ANCHOR_ACTOR_ID", "  claude in window 2  ")
    clean_env.setenv("ANCHOR_LOG_LEVEL", "debug")
    clean_env.setenv("DJANGO_DEBUG", "yes")
    clean_env.setenv("ALLOWED_HOSTS", "anchor.example.com, localhost ,")
    clean_env.setenv("ANCHOR_DB_PATH", "data/memory.db")
    values = env.read()
    assert values.ANCHOR_WORKSPACE_ID == "team-a.v2"
    assert values.ANCHOR_ACTOR_ID == "claude in window 2"
    assert values.ANCHOR_LOG_LEVEL == "DEBUG"
    assert values.DJANGO_DEBUG is True
    assert values.ALLOWED_HOSTS == ["anchor.example.com", "localhost"]
    # A relative path resolves against the working directory at start-up.
    assert Path(database()["NAME"]) == tmp_path / "data" / "memory.db"


def test_an_empty_variable_means_its_default(clean_env):
    clean_env.setenv("DJANGO_DEBUG", "")
    clean_env.setenv("ANCHOR_FEED_SETTLE_S", " ")
    clean_env.setenv("ANCHOR_HTTP_RATE_LIMIT", "")
    values = env.read()
    assert (values.DJANGO_DEBUG, values.ANCHOR_FEED_SETTLE_S) == (False, 5)
    assert values.ANCHOR_HTTP_RATE_LIMIT == (600, 60)


BAD_VALUES = [
    ("ANCHOR_WORKSPACE_ID", "bad id!", env.read),
    ("ANCHOR_WORKSPACE_ID", "", env.read),
    ("ANCHOR_WORKSPACE_ID", "-leading-dash", env.read),
    ("ANCHOR_WORKSPACE_ID", "w" * 65, env.read),
    ("ANCHOR_ACTOR_ID", "", env.read),
    ("ANCHOR_ACTOR_ID", "agent\x07bell", env.read),
    ("ANCHOR_ACTOR_ID", "a" * 301, env.read),
    ("ANCHOR_LOG_LEVEL", "loud", env.read),
    ("ANCHOR_DB_PATH", "   ", database),
    ("ANCHOR_DB_PATH", "{tmp}", database),
    ("ANCHOR_DB_PATH", "{tmp}/no/such/dir/anchor.db", database),
    ("DATABASE_URL", "mysql://anchor@localhost/anchor", database),
    ("DATABASE_URL", "sqlite:///anchor.db", database),
    ("DATABASE_URL", "postgres://anchor@localhost:5432", database),
    ("DATABASE_URL", "postgres://anchor@localhost:notaport/anchor", database),
    ("DJANGO_DEBUG", "maybe", env.read),
    ("ANCHOR_DB_CONN_MAX_AGE", "soon", database),
]

POSTGRES = "postgres://anchor@db.internal:5432/memory"
BAD_POOL_VALUES = [
    ("ANCHOR_DB_POOL_SIZE", "four"),
    ("ANCHOR_DB_POOL_SIZE", "-1"),
    ("ANCHOR_DB_POOL_TIMEOUT_S", "0"),
    ("ANCHOR_DB_POOL_TIMEOUT_S", "later"),
]


@pytest.mark.parametrize(("variable", "value"), BAD_POOL_VALUES)
def test_bad_pool_values_fail_naming_the_variable(clean_env, variable, value):
    clean_env.setenv("DATABASE_URL", POSTGRES)
    clean_env.setenv("ANCHOR_DB_CONN_MAX_AGE", "0")
    clean_env.setenv(variable, value)
    with pytest.raises(ImproperlyConfigured) as failure:
        database()
    assert variable in str(failure.value)


def test_postgres_over_http_takes_connections_from_a_bounded_pool(clean_env):
    from anchor_site.db_pool import reset_pooled_connection

    clean_env.setenv("DATABASE_URL", POSTGRES)
    # stdio: one connection kept for the life of the process, no pool.
    stdio = database()
    assert stdio["CONN_MAX_AGE"] == 600 and "pool" not in stdio.get("OPTIONS", {})
    # The ASGI server sets ANCHOR_DB_CONN_MAX_AGE=0: a pool of 4 by default.
    clean_env.setenv("ANCHOR_DB_CONN_MAX_AGE", "0")
    served = database()
    assert served["CONN_MAX_AGE"] == 0
    pool = served["OPTIONS"]["pool"]
    assert (pool["max_size"], pool["timeout"], pool["reset"]) == (4, 20, reset_pooled_connection)
    clean_env.setenv("ANCHOR_DB_POOL_SIZE", "9")
    clean_env.setenv("ANCHOR_DB_POOL_TIMEOUT_S", "5")
    pool = database()["OPTIONS"]["pool"]
    assert (pool["max_size"], pool["timeout"]) == (9, 5)
    clean_env.setenv("ANCHOR_DB_POOL_SIZE", "0")  # off: a connection per request
    assert "pool" not in database().get("OPTIONS", {})


@pytest.mark.parametrize(("variable", "value", "read"), BAD_VALUES)
def test_bad_values_fail_naming_the_variable(clean_env, tmp_path, variable, value, read):
    clean_env.setenv(variable, value.format(tmp=tmp_path))
    with pytest.raises(ImproperlyConfigured) as failure:
        read()
    assert variable in str(failure.value), f"the message does not name {variable}"
    assert "\n" not in str(failure.value), "the message must be one line"


def test_database_url_wins_over_anchor_db_path(clean_env):
    # Even a broken ANCHOR_DB_PATH does not matter once DATABASE_URL chooses PostgreSQL.
    clean_env.setenv("ANCHOR_DB_PATH", "/no/such/dir/anchor.db")
    clean_env.setenv("DATABASE_URL", "postgres://anchor:s3cret@db.internal:6543/memory")
    database_ = database()
    assert database_["ENGINE"] == "django.db.backends.postgresql"
    assert (database_["NAME"], database_["HOST"], database_["PORT"]) == (
        "memory",
        "db.internal",
        6543,
    )
    assert (database_["USER"], database_["PASSWORD"]) == ("anchor", "s3cret")


def test_sqlite_options_are_in_effect_on_a_real_connection(clean_env, tmp_path, django_db_blocker):
    clean_env.setenv("ANCHOR_DB_PATH", str(tmp_path / "probe.db"))
    handler = ConnectionHandler({"default": database()})
    probe = handler["default"]
    with django_db_blocker.unblock():
        try:
            with probe.cursor() as cursor:
                pragmas = {
                    name: cursor.execute(f"PRAGMA {name}").fetchone()[0]
                    for name in ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
                }
            assert pragmas == {
                "journal_mode": "wal",
                "busy_timeout": 60000,
                "foreign_keys": 1,
                "synchronous": 2,  # FULL
            }
            assert_write_lock_taken_at_begin(probe, tmp_path / "probe.db")
        finally:
            probe.close()


def assert_write_lock_taken_at_begin(probe, path: Path) -> None:
    """IMMEDIATE: an atomic block holds the write lock from BEGIN, even before it writes."""
    connections["anchor_probe"] = probe
    try:
        with transaction.atomic(using="anchor_probe"), probe.cursor() as cursor:
            cursor.execute("SELECT 1").fetchone()
            rival = sqlite3.connect(path, timeout=0, isolation_level=None)
            try:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    rival.execute("BEGIN IMMEDIATE")
            finally:
                rival.close()
    finally:
        del connections["anchor_probe"]


def test_query_timeout_defaults_to_ten_seconds_and_reads_the_variable(monkeypatch):
    monkeypatch.delenv("ANCHOR_QUERY_TIMEOUT_S", raising=False)
    assert env.read().ANCHOR_QUERY_TIMEOUT_S == 10
    monkeypatch.setenv("ANCHOR_QUERY_TIMEOUT_S", "2.5")
    assert env.read().ANCHOR_QUERY_TIMEOUT_S == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon", "inf", "7200"])
def test_a_bad_query_timeout_stops_start_up_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("ANCHOR_QUERY_TIMEOUT_S", value)
    with pytest.raises(ImproperlyConfigured, match="ANCHOR_QUERY_TIMEOUT_S"):
        env.read()


def test_sqlite_configuration_does_not_import_psycopg(tmp_path):
    """Reading the SQLite configuration leaves psycopg (and the pool module) unimported: its
    import is start-up time a SQLite stdio server would pay for nothing."""
    environment = {k: v for k, v in os.environ.items() if k not in ANCHOR_VARIABLES}
    environment["ANCHOR_DB_PATH"] = str(tmp_path / "anchor.sqlite3")
    probe = (
        "import sys\n"
        "from anchor_site.env import database_from_env, read\n"
        "assert database_from_env(read())['ENGINE'] == 'django.db.backends.sqlite3'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'psycopg'"
        " or m == 'anchor_site.db_pool'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.stdout.strip() == "[]", done.stdout
