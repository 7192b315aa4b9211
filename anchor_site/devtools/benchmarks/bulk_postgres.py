"""PostgreSQL's bulk path: COPY records, versions and audit events, then one set-based pass.

Through the per-row triggers a million records take hours: each row upserts the same two
names counter rows, and every upsert leaves a dead version of them that the next one must walk
past. Here the record triggers are disabled for the loading transaction only (ALTER TABLE is
transactional, so a failed load leaves them on), the rows are COPYed, and what the triggers
would have done is done once for the whole load:

- names:<collection> and names:* move by the number of records, as one bump per row would;
- the collection's active record count grows by the same number (the rows are all active);
- each record's full-text row is built by the same anchor_search_document the trigger calls.

The result is the same data a record_create per row leaves (tests/test_benchmark.py compares
them); the tables are analysed afterwards, as autovacuum would soon do, so the benchmark's
queries are planned against the data they read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

RECORD_TRIGGERS = ("records_record_names", "records_record_search", "records_record_count")
LOADED = "bench_loaded_records"

# What record_create writes beside each record, for the records listed in LOADED: the first
# stored version, the record.created event (its "after" is record_dict's state view) and the
# full-text row the search trigger would have built.
BESIDE_EACH_RECORD = (
    """INSERT INTO records_recordversion (record_id, version, title, data, aliases,
        archived_at, actor_id, recorded_at)
    SELECT r.id, 1, r.title, r.data, '[]', NULL, r.created_by, r.created_at
    FROM records_record r JOIN {loaded} l ON l.id = r.id""",
    """INSERT INTO records_auditevent (workspace_id, actor_id, kind, entity_type, entity_id,
        record_id, collection_id, before, after, decision_reason,
        agent_reported_clarification, review_evidence, action_id, item_index, created_at)
    SELECT r.workspace_id, r.created_by, 'record.created', 'record', r.id, r.id,
        r.collection_id, NULL,
        jsonb_build_object('collection_id', r.collection_id, 'title', r.title, 'data', r.data,
            'version', 1, 'archived_at', NULL, 'aliases', '[]'::jsonb),
        %s, '', '[]', '', NULL, r.created_at
    FROM records_record r JOIN {loaded} l ON l.id = r.id
    ORDER BY r.created_at, r.id""",
    """INSERT INTO records_record_search (record_id, document)
    SELECT r.id, anchor_search_document(r.title, r.data)
    FROM records_record r JOIN {loaded} l ON l.id = r.id""",
)


@dataclass(frozen=True)
class BulkRow:
    """One record and what record_create writes beside it, as column values."""

    record_id: str
    collection_id: str
    title: str
    data: str  # JSON text
    at: datetime
    after: str  # the audit event's "after": the record's state view, JSON text


def load(
    collection_id: str, rows: Iterator[BulkRow], workspace: str, actor: str, reason: str
) -> int:
    """COPY `rows` into `workspace` inside the caller's transaction, as created by `actor` for
    `reason`; returns the count."""

    with connection.cursor() as cursor:
        for trigger in RECORD_TRIGGERS:
            cursor.execute(f"ALTER TABLE records_record DISABLE TRIGGER {trigger}")
        count = 0
        with cursor.cursor.copy(  # psycopg's own cursor, for COPY
            "COPY records_record (id, workspace_id, collection_id, title, data, version, "
            "created_by, created_at, updated_at) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(
                    (row.record_id, workspace, collection_id, row.title, row.data, 1, actor)
                    + (row.at, row.at)
                )
                count += 1
        # Every write path stores a record's first version with it, so the collection's
        # records without one are exactly those just copied.
        cursor.execute(
            f"CREATE TEMPORARY TABLE {LOADED} AS SELECT r.id FROM records_record r "
            "WHERE r.collection_id = %s AND NOT EXISTS "
            "(SELECT 1 FROM records_recordversion v WHERE v.record_id = r.id)",
            [collection_id],
        )
        for statement in BESIDE_EACH_RECORD:
            cursor.execute(statement.format(loaded=LOADED), [reason] if "%s" in statement else [])
        cursor.execute(f"DROP TABLE {LOADED}")
        _move_names_counters(cursor, workspace, collection_id, count)
        _add_active_count(cursor, workspace, collection_id, count)
        # The copied rows' deferred foreign-key checks are pending trigger events, and a table
        # with pending events cannot be altered: run the checks now, then defer again.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for trigger in RECORD_TRIGGERS:
            cursor.execute(f"ALTER TABLE records_record ENABLE TRIGGER {trigger}")
        for table in ("records_record", "records_record_search", "records_recordversion"):
            cursor.execute(f"ANALYZE {table}")
    return count


def _move_names_counters(cursor, workspace: str, collection_id: str, count: int) -> None:
    """Where a bump per inserted row would have left the names counters."""
    if not count:
        return
    cursor.execute(
        "INSERT INTO records_revisioncounter (workspace_id, key, value) VALUES (%s, %s, %s), "
        "(%s, 'names:*', %s) ON CONFLICT (workspace_id, key) "
        "DO UPDATE SET value = records_revisioncounter.value + EXCLUDED.value",
        [workspace, f"names:{collection_id}", count, workspace, count],
    )


def _add_active_count(cursor, workspace: str, collection_id: str, count: int) -> None:
    """Where the count trigger, once per inserted (active) row, would have left the count."""
    if not count:
        return
    cursor.execute(
        "INSERT INTO records_collectioncount (collection_id, workspace_id, active) "
        "VALUES (%s, %s, %s) ON CONFLICT (collection_id) "
        "DO UPDATE SET active = records_collectioncount.active + EXCLUDED.active",
        [collection_id, workspace, count],
    )
