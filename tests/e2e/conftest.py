"""Where the server subprocess keeps its data: a temp SQLite file, or the pytest PostgreSQL DB."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.e2e.server import postgres_url


@pytest.fixture
def server_database(transactional_db, tmp_path) -> dict[str, str]:
    """Environment variables pointing a subprocess at a database this test owns.

    On PostgreSQL it is pytest-django's test database: transactional_db makes what the test
    and the subprocess commit visible to each other, and flushes it afterwards. On SQLite the
    test database is in memory, so the subprocess gets a file of its own.
    """
    if connection.vendor == "postgresql":
        return {"DATABASE_URL": postgres_url(connection.settings_dict)}
    return {"ANCHOR_DB_PATH": str(tmp_path / "anchor.db")}


@pytest.fixture
def server_log(tmp_path):
    """The server's stderr, kept in a file so tests can read what it logged."""
    path = tmp_path / "server-stderr.log"
    with open(path, "w") as log:
        yield log
