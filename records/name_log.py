"""Which records' names were written between two revisions of a names counter.

Read from records_namechange, which the counter triggers append to (see NameChange): one indexed
read of the changes themselves, never of the scope or of its history. Rows at or below a stored
name list's revision are pruned when the list is stored: a reader behind that point meets a
gap, which makes it read the names whole (the stored list and the rows after it), never guess.
"""

from __future__ import annotations

from django.db import connection

from records.models import NameChange, Record, RecordAlias


def prune_names_log(workspace_id: str, key: str, through: int) -> int:
    """Delete counter `key`'s rows at or below revision `through`; how many went."""
    deleted, _ = NameChange.objects.filter(
        workspace_id=workspace_id, key=key, revision__lte=through
    ).delete()
    return deleted


# One statement: the log's rows, then the titles and aliases of the records they name as they
# are now (in the scope), in the order the ORM reads them (records by creation, aliases by
# alias). Written out rather than compiled: it is what a fresh process's first resolve waits
# on, and compiling three querysets cold costs more than running them. CROSS JOIN keeps
# SQLite's planner starting from the few changed records (on PostgreSQL it is a plain join).
_WRITTEN_NOW = """
WITH changed AS (
    SELECT revision, record_id FROM {log}
    WHERE workspace_id = %s AND {key} = %s AND revision > %s AND revision <= %s
), named AS (SELECT DISTINCT record_id FROM changed)
SELECT 0, revision, record_id, NULL, NULL, NULL FROM changed
UNION ALL
SELECT 1, NULL, r.id, r.title, r.created_at, r.id FROM named CROSS JOIN {records} r
WHERE r.id = named.record_id AND r.workspace_id = %s {in_collection}
UNION ALL
SELECT 2, NULL, a.record_id, a.alias, NULL, a.alias
FROM named CROSS JOIN {records} r CROSS JOIN {aliases} a
WHERE r.id = named.record_id AND a.record_id = r.id AND r.workspace_id = %s {in_collection}
    AND a.workspace_id = %s
ORDER BY 1, 5, 6
"""


def names_written_now(
    workspace_id: str, collection_id: str | None, key: str, since: int, until: int, *, limit: int
) -> tuple[set[str], list[tuple[str, str, bool]]] | None:
    """The records whose names moved counter `key` after `since`, up to `until`, with their
    current (record_id, title or alias, is_alias) entries in the scope (the workspace, or
    `collection_id` in it) read in the same statement; a record gone from the scope has none.

    None when the log cannot say: more than `limit` moves in between (the caller reads the names
    whole instead), or a move with no row (a load that went around the triggers).
    """
    if until <= since:
        return set(), []
    if until - since > limit:
        return None
    quote = connection.ops.quote_name
    in_collection = "AND r.collection_id = %s" if collection_id else ""
    sql = _WRITTEN_NOW.format(
        log=quote(NameChange._meta.db_table),
        key=quote("key"),
        records=quote(Record._meta.db_table),
        aliases=quote(RecordAlias._meta.db_table),
        in_collection=in_collection,
    )
    in_scope = [workspace_id, collection_id] if collection_id else [workspace_id]
    with connection.cursor() as cursor:
        cursor.execute(sql, [workspace_id, key, since, until, *in_scope, *in_scope, workspace_id])
        rows = cursor.fetchall()
    logged = [row for row in rows if row[0] == 0]
    if len({row[1] for row in logged}) != until - since:
        return None  # a revision with no row: the log cannot say
    return {row[2] for row in logged}, [(row[2], row[3], row[0] == 2) for row in rows if row[0]]
