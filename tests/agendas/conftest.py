"""Agenda test fixtures: a fresh name cache, and a database a server subprocess can share."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.e2e.server import postgres_url
from tests.migrated_schema import migrated_copy
from workflow.names import cache as names_cache


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


@pytest.fixture
def shared_database(request: pytest.FixtureRequest, tmp_path) -> dict[str, str]:
    """Environment pointing mcp_serve subprocesses at a database this test owns.

    On PostgreSQL it is pytest-django's test database (the test must be marked
    django_db(transaction=True) so commits are visible both ways); on SQLite a temp file.
    """
    if connection.vendor == "postgresql":
        return {"DATABASE_URL": postgres_url(connection.settings_dict)}
    return {"ANCHOR_DB_PATH": migrated_copy(tmp_path / "anchor.db")}


@pytest.fixture
def server_stderr(tmp_path):
    path = tmp_path / "server-stderr.log"
    with open(path, "w") as log:
        yield log
