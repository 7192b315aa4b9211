"""Fixtures for the reliability tests: a database the server subprocesses share with the test.

On PostgreSQL that is pytest-django's test database, so every test that starts a server is
marked django_db(transaction=True): the servers' commits must be visible to the test, and the
database is flushed afterwards. On SQLite each test gets a file of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from django.db import connection

from tests.e2e.server import base_env, postgres_url
from tests.migrated_schema import migrated_copy
from tests.reliability.harness import Store

ON_POSTGRES = connection.vendor == "postgresql"
HERE = Path(__file__).resolve().parent
SLOW_COMMAND = "uv run pytest tests/reliability -m slow"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long runs (marked slow) happen only when asked for with -m slow.

    Elsewhere in the suite `slow` only labels tests, which still run; these take minutes, so a
    plain `pytest` skips them and says how to run them.
    """
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=f"long reliability run; run it with: {SLOW_COMMAND}")
    for item in items:
        if item.get_closest_marker("slow") and HERE in Path(item.fspath).resolve().parents:
            item.add_marker(skip)


@pytest.fixture
def database(tmp_path) -> dict[str, str]:
    """Environment variables pointing mcp_serve at the database this test owns."""
    if ON_POSTGRES:
        # pytest-django's flush truncates the models' tables but not the search table the
        # triggers keep, so an earlier test's index rows would look like orphans here.
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM records_record_search s WHERE NOT EXISTS "
                "(SELECT 1 FROM records_record r WHERE r.id = s.record_id)"
            )
        return {"DATABASE_URL": postgres_url(connection.settings_dict)}
    return {"ANCHOR_DB_PATH": migrated_copy(tmp_path / "anchor.db")}


@pytest.fixture
def server_env(database) -> dict[str, str]:
    return base_env(**database)


@pytest.fixture
def store(database) -> Iterator[Store]:
    """Opened lazily by the test after the first server has created the file (SQLite)."""
    opened: list[Store] = []

    class Lazy:
        def __getattr__(self, name: str) -> Any:
            if not opened:
                opened.append(Store(database))
            return getattr(opened[0], name)

    # Lazy forwards every attribute to the Store it opens on first use, so it is one to callers.
    yield cast(Store, Lazy())
    for each in opened:
        each.close()
