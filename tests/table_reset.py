"""Emptying the database after a test that commits, at a fraction of Django's flush.

After a transactional test (`transactional_db`, `live_server`) Django empties the database with
`flush`: on PostgreSQL one TRUNCATE of every table, which replaces every table's and index's
files (about 160 ms here for the project's tables, however few rows they hold), then the
post_migrate signal, which re-creates every content type and permission (about 60 ms). Over
the two hundred such tests of a PostgreSQL run that was more than a minute. By then most
tables are empty and the rest hold a few rows, so this deletes the rows of the tables that
have any, and keeps the content types, permissions and role groups migrate made (tests read
and assign them, never change them): a few milliseconds.

Deleting fires the tables' triggers, which may write rows of their own (the records counters),
so it looks again until every table is empty. A table with many rows is truncated instead, and
whatever it cannot empty in a few rounds, or a database whose content types are gone, gets
Django's own flush, and then a round of its own for what triggers wrote during that flush.
`install` puts it in place of `TransactionTestCase._fixture_teardown` for the tests that flush
the whole database (no `available_apps`, no serialized rollback).
"""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connections, transaction
from django.test import TransactionTestCase

# Left as migrate made them: flush would empty them and post_migrate fill them again (the
# role groups too, records.roles).
KEPT = ("django_content_type", "auth_permission", "auth_group", "auth_group_permissions")
# Past this many rows a table is truncated: deleting row by row would cost more.
MANY_ROWS = 2_000
ROUNDS = 3


class _NotEmptied(Exception):
    """Rolls back a reset that could not empty every table."""


def row_counts(connection: Any, tables: list[str]) -> dict[str, int]:
    """Each table's row count, capped just past MANY_ROWS, in one query."""
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s, (SELECT COUNT(*) FROM (SELECT 1 FROM {quote(t)} LIMIT {MANY_ROWS + 1}) s)"
        for t in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(probes, tables)
        return dict(cursor.fetchall())


def empty_tables(alias: str = "default") -> bool:
    """Delete every row of every table but KEPT; False (nothing changed) when it cannot, so
    the caller flushes instead."""
    connection = connections[alias]
    tables = [
        t
        for t in connection.introspection.django_table_names(
            only_existing=True, include_views=False
        )
        if t not in KEPT
    ]
    if not tables:
        return True
    try:
        with transaction.atomic(using=alias):
            if not row_counts(connection, list(KEPT)).get(KEPT[0]):
                raise _NotEmptied  # content types gone: post_migrate must run
            for _ in range(ROUNDS):
                filled = {t: n for t, n in row_counts(connection, tables).items() if n}
                if not filled:
                    return True
                many = [t for t, n in filled.items() if n > MANY_ROWS]
                with connection.cursor() as cursor:
                    for table in filled.keys() - set(many):
                        cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")
                    for sql in connection.ops.sql_flush(no_style(), many, allow_cascade=True):
                        cursor.execute(sql)
            raise _NotEmptied
    except _NotEmptied:
        return False


def _fixture_teardown(self: TransactionTestCase) -> None:
    if self.available_apps is not None or self.serialized_rollback:
        _django_fixture_teardown(self)
        return
    for alias in self._databases_names(include_mirrors=False):  # type: ignore[attr-defined]
        if not empty_tables(alias):
            call_command(
                "flush",
                verbosity=0,
                interactive=False,
                database=alias,
                reset_sequences=False,
                allow_cascade=False,
                inhibit_post_migrate=False,
            )
            # Django's flush deletes table by table on SQLite, so rows a trigger writes
            # while a later table is emptied (the names log) outlive it.
            empty_tables(alias)


_django_fixture_teardown = TransactionTestCase._fixture_teardown  # type: ignore[attr-defined]


def install() -> None:
    TransactionTestCase._fixture_teardown = _fixture_teardown  # type: ignore[attr-defined]
