"""A dry run moves no revision counter (PostgreSQL), so a prepare never queues on a writer's lock.

prepare_write applies the write inside a transaction it rolls back, to show its preview. Its
inserts fired the counter triggers, which lock the collection's and the workspace's names
counters until the rollback: every prepare queued behind every commit into the same collection,
and every commit behind every prepare. The counter functions now return at once when the
transaction-local setting `anchor.dry_run` is on (records.dry_run sets it for the dry run only;
rolling the dry run back clears it). SQLite is unchanged: one writer at a time is its design.
"""

from django.db import migrations

DRY_RUN = "IF current_setting('anchor.dry_run', true) = 'on' THEN RETURN; END IF;"

BUMP_NAMES = """CREATE OR REPLACE FUNCTION anchor_bump_names(
    ws varchar, counter_key varchar, rec varchar, create_missing boolean)
RETURNS void AS $$
DECLARE moved bigint;
BEGIN
    {guard}
    IF create_missing THEN
        INSERT INTO records_revisioncounter(workspace_id, key, value)
        VALUES (ws, counter_key, 1)
        ON CONFLICT (workspace_id, key)
        DO UPDATE SET value = records_revisioncounter.value + 1
        RETURNING value INTO moved;
    ELSE
        UPDATE records_revisioncounter SET value = value + 1
        WHERE workspace_id = ws AND key = counter_key
        RETURNING value INTO moved;
    END IF;
    IF moved IS NOT NULL THEN
        INSERT INTO records_namechange(workspace_id, key, revision, record_id)
        VALUES (ws, counter_key, moved, rec);
    END IF;
END $$ LANGUAGE plpgsql"""

BUMP = """CREATE OR REPLACE FUNCTION anchor_bump(ws varchar, counter_key varchar)
RETURNS void AS $$
BEGIN
    {guard}
    INSERT INTO records_revisioncounter(workspace_id, key, value) VALUES (ws, counter_key, 1)
    ON CONFLICT (workspace_id, key)
    DO UPDATE SET value = records_revisioncounter.value + 1;
END $$ LANGUAGE plpgsql"""


BUMP_EXISTING = """CREATE OR REPLACE FUNCTION anchor_bump_existing(ws varchar, counter_key varchar)
RETURNS void AS $$
BEGIN
    {guard}
    UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = ws AND key = counter_key;
END $$ LANGUAGE plpgsql"""


def _install(schema_editor, guard: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for function in (BUMP_NAMES, BUMP, BUMP_EXISTING):
            cursor.execute(function.format(guard=guard))


def install(apps, schema_editor):
    _install(schema_editor, DRY_RUN)


def uninstall(apps, schema_editor):
    _install(schema_editor, "")


class Migration(migrations.Migration):
    dependencies = [("records", "0008_name_change")]

    operations = [migrations.RunPython(install, uninstall)]
