"""SQLite's query-planner statistics, taken again as the store grows.

Until ANALYZE has measured a SQLite table's indexes, the planner guesses from their shape, and
for `workspace_id = ? AND id IN (?, ?, ?)` it guesses wrong: it walks the index that starts
with the workspace, which holds every row of the workspace, instead of looking the few IDs up
by the primary key. At a million records that turns a three-row lookup (what a batch's commit
makes to find the collections it touches) into a scan of about a third of a second, and the
cost grows with the history. PostgreSQL's autovacuum keeps its statistics current by itself;
SQLite's must be taken.

`refresh` measures the tables that have no statistics yet, or have grown tenfold since they
were measured, and leaves the rest alone; the selectivity a plan depends on (one workspace
holds many rows, one ID one row) stays true as a table grows, so older figures keep serving.
Each index is sampled at most ANALYSIS_LIMIT rows, so a refresh costs milliseconds whatever
the store's size. The stdio server runs it on start, after its migrations.
"""

from __future__ import annotations

from typing import Any

from django.db import connections

ANALYSIS_LIMIT = 1_000
GROWTH = 10
# Below this many rows any plan answers at once, and figures taken now would soon be outgrown.
MIN_ROWS = 1_000


def _measured_rows(cursor: Any) -> dict[str, int]:
    """The row count each table had when last measured (none for a table never measured)."""
    cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
    if cursor.fetchone() is None:
        return {}
    cursor.execute("SELECT tbl, stat FROM sqlite_stat1")
    measured: dict[str, int] = {}
    for table, stat in cursor.fetchall():
        rows = int(str(stat).split()[0]) if stat else 0
        measured[table] = max(measured.get(table, 0), rows)
    return measured


def stale_tables(alias: str = "default") -> list[str]:
    """The tables whose statistics are missing or outgrown, by the highest rowid (a bound on
    the rows it holds, read from the end of its B-tree rather than by counting)."""
    connection = connections[alias]
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        measured = _measured_rows(cursor)
        stale = []
        for table in sorted(tables):
            cursor.execute(f"SELECT max(rowid) FROM {connection.ops.quote_name(table)}")
            size = cursor.fetchone()[0] or 0
            if size >= MIN_ROWS and size > GROWTH * measured.get(table, 0):
                stale.append(table)
    return stale


def refresh(alias: str = "default") -> list[str]:
    """Measure the stale tables of a SQLite database (nothing elsewhere); returns their names."""
    connection = connections[alias]
    if connection.vendor != "sqlite":
        return []
    stale = stale_tables(alias)
    if stale:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
            for table in stale:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    return stale
