"""Active record counts per collection, kept by triggers, so a catalog never counts records.

list_collections, the digest and discover_collections counted every active record of the
workspace on each call: seconds at a million records. records_collectioncount holds the count
instead, moved by the record triggers below on insert, delete, archive, unarchive and a move
between collections, inside the writing statement, whatever writes the row (services, the bulk
import, a restore, the admin, raw SQL). A collection's row is removed with it. Existing counts
are backfilled here.

A dry run (PostgreSQL's `anchor.dry_run`, see records.dry_run and 0009) must not lock a count
row: prepares would queue behind commits into the same collection again, and a dry run touching
two collections could deadlock with a commit touching them in the other order. Skipping the move
would be wrong the one time a caller keeps a dry run's writes, so the dry run appends its moves
to records_collectioncountchange instead (no shared row, no lock); they roll back with it, and
readers add whatever rows remain. SQLite runs one writer at a time and always moves the row.
"""

from django.db import migrations, models

SQLITE_ADD = """
INSERT INTO records_collectioncount(collection_id, workspace_id, active)
    SELECT {row}.collection_id, {row}.workspace_id, 1 WHERE {row}.archived_at IS NULL
    ON CONFLICT(collection_id) DO UPDATE SET active = active + 1;
"""
SQLITE_REMOVE = """
UPDATE records_collectioncount SET active = active - 1
    WHERE collection_id = {row}.collection_id AND {row}.archived_at IS NULL;
"""
# Only changes that can move a count: archived or not, or which collection.
SQLITE_MOVED = (
    "OLD.collection_id IS NOT NEW.collection_id "
    "OR (OLD.archived_at IS NULL) IS NOT (NEW.archived_at IS NULL)"
)

SQLITE_STATEMENTS = [
    f"""CREATE TRIGGER records_record_count_ins AFTER INSERT ON records_record BEGIN
    {SQLITE_ADD.format(row="NEW")} END""",
    f"""CREATE TRIGGER records_record_count_upd AFTER UPDATE ON records_record
    WHEN {SQLITE_MOVED} BEGIN
    {SQLITE_REMOVE.format(row="OLD")}
    {SQLITE_ADD.format(row="NEW")} END""",
    f"""CREATE TRIGGER records_record_count_del AFTER DELETE ON records_record BEGIN
    {SQLITE_REMOVE.format(row="OLD")} END""",
    """CREATE TRIGGER records_collection_count_del AFTER DELETE ON records_collection BEGIN
    DELETE FROM records_collectioncount WHERE collection_id = OLD.id;
    DELETE FROM records_collectioncountchange WHERE collection_id = OLD.id; END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS records_record_count_ins",
    "DROP TRIGGER IF EXISTS records_record_count_upd",
    "DROP TRIGGER IF EXISTS records_record_count_del",
    "DROP TRIGGER IF EXISTS records_collection_count_del",
]

POSTGRES_STATEMENTS = [
    """CREATE OR REPLACE FUNCTION anchor_count_active(coll varchar, ws varchar, delta integer)
    RETURNS void AS $$
    BEGIN
        IF current_setting('anchor.dry_run', true) = 'on' THEN
            INSERT INTO records_collectioncountchange(collection_id, workspace_id, delta)
            VALUES (coll, ws, delta);
        ELSIF delta > 0 THEN
            INSERT INTO records_collectioncount(collection_id, workspace_id, active)
            VALUES (coll, ws, delta)
            ON CONFLICT (collection_id)
            DO UPDATE SET active = records_collectioncount.active + delta;
        ELSE
            UPDATE records_collectioncount SET active = active + delta
            WHERE collection_id = coll;
        END IF;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_count() RETURNS trigger AS $$
    DECLARE was_active boolean := false; is_active boolean := false;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN was_active := OLD.archived_at IS NULL; END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN is_active := NEW.archived_at IS NULL; END IF;
        IF TG_OP = 'UPDATE' AND OLD.collection_id IS NOT DISTINCT FROM NEW.collection_id
           AND was_active = is_active THEN
            RETURN NULL;
        END IF;
        IF was_active THEN
            PERFORM anchor_count_active(OLD.collection_id, OLD.workspace_id, -1);
        END IF;
        IF is_active THEN
            PERFORM anchor_count_active(NEW.collection_id, NEW.workspace_id, 1);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_record_count
    AFTER INSERT OR UPDATE OF archived_at, collection_id OR DELETE ON records_record
    FOR EACH ROW EXECUTE FUNCTION anchor_record_count()""",
    """CREATE OR REPLACE FUNCTION anchor_collection_count_gone() RETURNS trigger AS $$
    BEGIN
        DELETE FROM records_collectioncount WHERE collection_id = OLD.id;
        DELETE FROM records_collectioncountchange WHERE collection_id = OLD.id;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_collection_count AFTER DELETE ON records_collection
    FOR EACH ROW EXECUTE FUNCTION anchor_collection_count_gone()""",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS records_record_count ON records_record",
    "DROP TRIGGER IF EXISTS records_collection_count ON records_collection",
    "DROP FUNCTION IF EXISTS anchor_record_count()",
    "DROP FUNCTION IF EXISTS anchor_collection_count_gone()",
    "DROP FUNCTION IF EXISTS anchor_count_active(varchar, varchar, integer)",
]

BACKFILL = """INSERT INTO records_collectioncount(collection_id, workspace_id, active)
    SELECT collection_id, workspace_id, COUNT(*) FROM records_record
    WHERE archived_at IS NULL GROUP BY collection_id, workspace_id"""


def _run(schema_editor, by_vendor: dict[str, list[str]]) -> None:
    vendor = schema_editor.connection.vendor
    if vendor not in by_vendor:
        raise RuntimeError(f"Anchor supports SQLite and PostgreSQL, not {vendor}.")
    with schema_editor.connection.cursor() as cursor:
        for statement in by_vendor[vendor]:
            cursor.execute(statement)


def install(apps, schema_editor):
    # Triggers first, then the backfill, in the migration's one transaction.
    _run(
        schema_editor,
        {"sqlite": [*SQLITE_STATEMENTS, BACKFILL], "postgresql": [*POSTGRES_STATEMENTS, BACKFILL]},
    )


def uninstall(apps, schema_editor):
    _run(schema_editor, {"sqlite": SQLITE_DROP, "postgresql": POSTGRES_DROP})


class Migration(migrations.Migration):
    dependencies = [("records", "0010_record_embedding")]

    operations = [
        migrations.CreateModel(
            name="CollectionCount",
            fields=[
                (
                    "collection_id",
                    models.CharField(max_length=36, primary_key=True, serialize=False),
                ),
                ("workspace_id", models.CharField(max_length=64)),
                ("active", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="CollectionCountChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("collection_id", models.CharField(db_index=True, max_length=36)),
                ("workspace_id", models.CharField(max_length=64)),
                ("delta", models.IntegerField()),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
