"""mcp_serve's start-up migration check (one query when the database is up to date) and the
schemas a new database is made from."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing

import psycopg
import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from anchor_site.devtools.benchmarks.data import scratch_database
from tests.e2e.server import REPO_ROOT, base_env, postgres_url
from tests.migrated_schema import _template, postgresql_schema_sql, schema_sql
from workflow.management.commands import mcp_serve

SQLITE = mcp_serve.SCHEMAS / "schema.sqlite.sql"
POSTGRESQL = mcp_serve.SCHEMAS / "schema.postgresql.sql"


@pytest.mark.django_db
def test_an_up_to_date_database_is_checked_without_building_the_migration_graph(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the migration graph was built")

    monkeypatch.setattr(MigrationLoader, "build_graph", refuse)
    assert ("records", "0001_initial") in mcp_serve._installed_migrations()
    assert mcp_serve._all_recorded()


@pytest.mark.django_db(transaction=True)
def test_an_unrecorded_migration_is_noticed():
    recorder = MigrationRecorder(connection)
    latest = max(name for app, name in recorder.applied_migrations() if app == "workflow")
    recorder.record_unapplied("workflow", latest)
    try:
        assert not mcp_serve._all_recorded()
    finally:
        recorder.record_applied("workflow", latest)


@pytest.mark.backend_free
def test_the_schema_a_new_database_is_made_from_is_a_migrated_database():
    """workflow/management/schema.sqlite.sql is every app's migrations applied, and loads back
    to the same text. Rewrite it with `uv run python -m tests.migrated_schema` when this fails."""
    assert schema_sql(_template()) == SQLITE.read_text()


@pytest.mark.backend_free
def test_the_schema_loads_into_a_database_that_writes_the_same_schema(tmp_path):
    loaded = tmp_path / "loaded.db"
    with closing(sqlite3.connect(loaded)) as db:
        db.executescript(SQLITE.read_text())
    assert schema_sql(loaded) == SQLITE.read_text()


# Every table's columns, constraints, indexes and triggers, and the functions: what a database
# made from the schema must share with a migrated one.
CATALOG = """
SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' '
    || coalesce(column_default, '') FROM information_schema.columns
    WHERE table_schema = current_schema()
UNION ALL SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()
UNION ALL SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
UNION ALL SELECT pg_get_functiondef(oid) FROM pg_proc
    WHERE pronamespace = current_schema()::regnamespace
UNION ALL SELECT app || '.' || name FROM django_migrations
UNION ALL SELECT 'permission ' || codename || ' ' || count(*) FROM auth_permission
    LEFT JOIN auth_group_permissions ON permission_id = auth_permission.id GROUP BY codename
ORDER BY 1
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_the_postgresql_schema_is_what_the_migrations_send_and_loads_to_the_same_database():
    """workflow/management/schema.postgresql.sql is the SQL the migrations send to a new
    database. Rewrite it with `DATABASE_URL=postgres://... uv run python -m
    tests.migrated_schema` when this fails."""
    url = postgres_url(connection.settings_dict)
    with (
        scratch_database(url, f"{connection.settings_dict['NAME']}_migrated") as migrated,
        scratch_database(url, f"{connection.settings_dict['NAME']}_loaded") as loaded,
    ):
        assert postgresql_schema_sql(migrated) == POSTGRESQL.read_text()
        with psycopg.connect(loaded) as db:
            db.execute(POSTGRESQL.read_text())
        catalogs = []
        for each in (migrated, loaded):
            with psycopg.connect(each) as db:
                catalogs.append(db.execute(CATALOG).fetchall())
        assert catalogs[0] == catalogs[1]


@pytest.mark.postgres
@pytest.mark.slow
def test_a_postgresql_schema_that_fails_part_way_leaves_the_database_empty(tmp_path):
    """All or nothing: the next start finds no tables and makes the database again."""
    (tmp_path / "schema.postgresql.sql").write_text(POSTGRESQL.read_text() + "SELECT broken();\n")
    runner = (
        "import django, pathlib, runpy, sys\n"
        "django.setup()\n"
        "from workflow.management.commands import mcp_serve\n"
        f"mcp_serve.SCHEMAS = pathlib.Path({str(tmp_path)!r})\n"
        "sys.argv = ['manage.py', 'mcp_serve']\n"
        "runpy.run_path('manage.py', run_name='__main__')\n"
    )
    name = f"{connection.settings_dict['NAME']}_broken"
    with scratch_database(postgres_url(connection.settings_dict), name) as url:
        done = subprocess.run(
            [sys.executable, "-c", runner],
            cwd=REPO_ROOT,
            env=base_env(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="anchor_site.settings_stdio"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode != 0 and "function broken() does not exist" in done.stderr
        with psycopg.connect(url) as db:
            tables = db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            assert tables.fetchall() == []
