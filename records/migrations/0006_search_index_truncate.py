"""Emptying the records table empties PostgreSQL's full-text table with it.

The full-text table is kept by a row trigger, and TRUNCATE fires no row triggers. Django's
``flush`` (and the test runner after every transactional test) truncates the records table, so
the index kept documents of records that were gone; a record loaded again under the same ID then
had two claims on one index row's place and counts stopped agreeing. A statement trigger on
TRUNCATE clears the index in the same transaction. SQLite's flush deletes row by row, which its
row triggers already follow.
"""

from django.db import migrations

POSTGRES_STATEMENTS = [
    """CREATE OR REPLACE FUNCTION anchor_record_search_truncate() RETURNS trigger AS $$
    BEGIN
        TRUNCATE records_record_search;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_record_search_truncate AFTER TRUNCATE ON records_record
    FOR EACH STATEMENT EXECUTE FUNCTION anchor_record_search_truncate()""",
    # Stores flushed before this migration may hold documents of records that are gone.
    """DELETE FROM records_record_search s
    WHERE NOT EXISTS (SELECT 1 FROM records_record r WHERE r.id = s.record_id)""",
]

POSTGRES_REVERSE = [
    "DROP TRIGGER IF EXISTS records_record_search_truncate ON records_record",
    "DROP FUNCTION IF EXISTS anchor_record_search_truncate()",
]


def _run(statements: list[str]):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("records", "0005_counter_delete_triggers")]

    operations = [migrations.RunPython(_run(POSTGRES_STATEMENTS), _run(POSTGRES_REVERSE))]
