"""The `postgres`, `sqlite` and `backend_free` markers do what they say: a marked test runs on
its backend only (a backend-free one in the SQLite run).

Each test below fails on the other backend, so a marker that stopped skipping shows up as a
failure on one of the two CI runs, and one that skipped too much as a skip on its own.
"""

from __future__ import annotations

import pytest
from django.db import connection


@pytest.mark.postgres
def test_a_postgres_test_runs_only_on_postgresql():
    assert connection.vendor == "postgresql"


@pytest.mark.sqlite
def test_a_sqlite_test_runs_only_on_sqlite():
    assert connection.vendor == "sqlite"


@pytest.mark.backend_free
def test_a_backend_free_test_runs_once_in_the_sqlite_run():
    assert connection.vendor == "sqlite"


def test_the_test_for_the_other_backend_is_skipped_saying_how_to_run_it(request):
    skips = {
        item.name: [mark.kwargs.get("reason") for mark in item.iter_markers("skip")]
        for item in request.session.items
        if item.parent is request.node.parent and item is not request.node
    }
    postgres_only = skips["test_a_postgres_test_runs_only_on_postgresql"]
    sqlite_only = skips["test_a_sqlite_test_runs_only_on_sqlite"]
    backend_free = skips["test_a_backend_free_test_runs_once_in_the_sqlite_run"]
    if connection.vendor == "sqlite":
        assert sqlite_only == backend_free == []
        assert postgres_only == [
            "needs PostgreSQL: run with DATABASE_URL=postgres://USER@HOST:PORT/NAME"
        ]
    else:
        assert postgres_only == []
        assert sqlite_only == ["needs SQLite: run without DATABASE_URL"]
        assert backend_free == ["touches no database: runs once, in the SQLite run"]
