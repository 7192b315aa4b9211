"""Where the server subprocess keeps its data: a temp SQLite file, or the pytest PostgreSQL DB."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.e2e.server import postgres_url
from tests.migrated_schema import migrated_copy

ON_POSTGRES = connection.vendor == "postgresql"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """On PostgreSQL the server shares pytest's test database, so those tests must commit.

    A marker, not request.getfixturevalue("transactional_db"): pytest-django decides between
    rollback and flush from the fixtures named up front, and would silently pick rollback.
    On SQLite the server gets a file of its own and the test database is not touched at all.
    """
    if not ON_POSTGRES:
        return
    for item in items:
        if {"server_database", "new_server_database"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.django_db(transaction=True))


@pytest.fixture
def server_database(tmp_path) -> dict[str, str]:
    """Environment variables pointing a subprocess at a migrated database this test owns."""
    if ON_POSTGRES:
        return {"DATABASE_URL": postgres_url(connection.settings_dict)}
    return {"ANCHOR_DB_PATH": migrated_copy(tmp_path / "anchor.db")}


@pytest.fixture
def new_server_database(tmp_path) -> dict[str, str]:
    """As server_database, but on SQLite a file that does not exist yet: a first start."""
    if ON_POSTGRES:
        return {"DATABASE_URL": postgres_url(connection.settings_dict)}
    return {"ANCHOR_DB_PATH": str(tmp_path / "new.db")}


@pytest.fixture
def server_log(tmp_path):
    """The server's stderr, kept in a file so tests can read what it logged."""
    path = tmp_path / "server-stderr.log"
    with open(path, "w") as log:
        yield log
