"""mcp_serve's start-up migration check: one query when the database is up to date, the
whole migration plan otherwise."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

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
