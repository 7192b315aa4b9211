"""Reading one stored name list row (workflow.models.StoredNameList) as fast as the backend allows.

The row is megabytes at 100,000 names and is read on the first resolve of a fresh process. In
PostgreSQL's text protocol (what Django's cursors use) the packed record IDs arrive
hex-encoded, twice their size, and are decoded in the client; the binary protocol carries
them as they are stored. So on PostgreSQL the row is read with a binary-result cursor on the
connection Django holds (the same transaction); SQLite hands over its blobs as they are.

The statement is written out from the model's columns rather than compiled by the ORM: in a
fresh process the first compile of a model's query (its fields, its default ordering) costs
more than the read itself, and this read is what the first resolve after a restart waits on.
"""

from __future__ import annotations

from functools import cache

from django.db import connection

from workflow.models import StoredNameList

# What workflow.name_index.ScopeNames.from_stored reads, nothing more.
FIELDS = ("revision", "layout", "record_ids", "names", "displays", "display_marks", "aliases")


@cache
def _statement(vendor: str) -> str:
    meta = StoredNameList._meta
    quote = connection.ops.quote_name
    column = {f.name: f.column for f in meta.concrete_fields}
    columns = ", ".join(quote(column[name]) for name in FIELDS)
    workspace = quote(column["workspace"])
    scope_key = quote(column["scope_key"])
    # One row at most (a unique constraint on the pair), so no ordering is needed.
    return (
        f"SELECT {columns} FROM {quote(meta.db_table)} WHERE {workspace} = %s AND {scope_key} = %s"
    )


def read_stored(workspace_id: str, scope_key: str) -> StoredNameList | None:
    sql = _statement(connection.vendor)
    params = (workspace_id, scope_key)
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
    else:
        import psycopg  # only on PostgreSQL, where Django has imported it already

        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as raw:
            raw.execute(sql, params, binary=True)
            row = raw.fetchone()
    if row is None:
        return None
    return StoredNameList(
        workspace_id=workspace_id, scope_key=scope_key, **dict(zip(FIELDS, row, strict=True))
    )
