"""Reading one stored name list row (workflow.models.StoredNameList) as fast as the backend allows.

The row is megabytes at 100,000 names and is read on the first resolve of a fresh process. In
PostgreSQL's text protocol (what Django's cursors use) the packed record IDs arrive
hex-encoded, twice their size, and are decoded in the client; the binary protocol carries
them as they are stored. So on PostgreSQL the row is read with a binary-result cursor on the
connection Django holds (the same transaction); SQLite hands over its blobs as they are.
"""

from __future__ import annotations

from django.db import connection

from workflow.models import StoredNameList

FIELDS = (
    "id",
    "workspace_id",
    "scope_key",
    "revision",
    "layout",
    "record_ids",
    "names",
    "displays",
    "display_marks",
    "aliases",
)


def read_stored(workspace_id: str, scope_key: str) -> StoredNameList | None:
    rows = StoredNameList.objects.filter(workspace_id=workspace_id, scope_key=scope_key)
    if connection.vendor != "postgresql":
        return rows.first()
    import psycopg  # only on PostgreSQL, where Django has imported it already

    sql, params = rows.values_list(*FIELDS).query.sql_with_params()
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, binary=True)
        row = cursor.fetchone()
    return None if row is None else StoredNameList(**dict(zip(FIELDS, row, strict=True)))
