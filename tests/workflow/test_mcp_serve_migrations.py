"""mcp_serve's start-up migration check: one query when the database is up to date, the
whole migration plan otherwise."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from tests.migrated_schema import _template, schema_sql
from workflow.management.commands import mcp_serve


@pytest.fixture
def no_graph(monkeypatch):
    """Fail if the migration graph is built (it imports every migration module)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the migration graph was built")

    monkeypatch.setattr(mcp_serve, "MigrationExecutor", refuse)


@pytest.mark.django_db
def test_an_up_to_date_database_is_checked_without_building_the_migration_graph(no_graph):
    assert ("records", "0001_initial") in mcp_serve._installed_migrations()
    assert mcp_serve._unapplied_migrations() == []


@pytest.mark.django_db(transaction=True)
def test_an_unrecorded_migration_is_planned(monkeypatch):
    recorder = MigrationRecorder(connection)
    latest = max(name for app, name in recorder.applied_migrations() if app == "workflow")
    recorder.record_unapplied("workflow", latest)
    try:
        plan = mcp_serve._unapplied_migrations()
        assert [(m.app_label, m.name) for m, _backwards in plan] == [("workflow", latest)]
    finally:
        recorder.record_applied("workflow", latest)


@pytest.mark.backend_free
def test_the_schema_a_new_database_is_made_from_is_a_migrated_database():
    """workflow/management/schema.sql is every app's migrations applied, and loads back to the
    same text. Rewrite it with `uv run python -m tests.migrated_schema` when this fails."""
    assert schema_sql(_template()) == mcp_serve.SCHEMA.read_text()


@pytest.mark.backend_free
def test_the_schema_loads_into_a_database_that_writes_the_same_schema(tmp_path):
    loaded = tmp_path / "loaded.db"
    with closing(sqlite3.connect(loaded)) as db:
        db.executescript(mcp_serve.SCHEMA.read_text())
    assert schema_sql(loaded) == mcp_serve.SCHEMA.read_text()
