"""Embeddings for search by meaning, and the two counters that say when a scope's vectors move.

meaning:records moves when a record is created, deleted, or brought to a new version (data,
title, archive, collection); meaning:vectors moves when an embedding row is written or deleted.
Search by meaning keeps a workspace's vectors in memory keyed by both: while neither moved
the cached vectors are current, and when meaning:records moved it looks for records whose
embedding is missing or behind (a bulk write, a restore, a crash) before trusting them.
"""

import django.db.models.deletion
from django.db import migrations, models

# NOT EXISTS rather than INSERT OR IGNORE: an embedding is written with an upsert (INSERT ... ON
# CONFLICT DO UPDATE), and SQLite applies the outer statement's conflict handling to the
# statements of the triggers it fires, so OR IGNORE would not ignore there.
SQLITE_CREATE = """
INSERT INTO records_revisioncounter(workspace_id, key, value)
    SELECT {ws}, '{key}', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = {ws})
    AND NOT EXISTS (SELECT 1 FROM records_revisioncounter WHERE workspace_id = {ws}
                    AND key = '{key}');
"""
SQLITE_MOVE = """
UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = {ws} AND key = '{key}';
"""


def sqlite_bump(ws: str, key: str, *, create: bool = True) -> str:
    """Move a counter. A delete moves only a counter that exists: during a flush of the whole
    database a row made for a workspace deleted later in it would break its foreign key."""
    steps = ([SQLITE_CREATE] if create else []) + [SQLITE_MOVE]
    return "".join(step.format(ws=ws, key=key) for step in steps)


RECORD_MOVED = (
    "OLD.version IS NOT NEW.version OR OLD.title IS NOT NEW.title "
    "OR OLD.archived_at IS NOT NEW.archived_at OR OLD.collection_id IS NOT NEW.collection_id"
)

SQLITE_TRIGGERS = {
    "records_record_meaning_ins": f"""CREATE TRIGGER records_record_meaning_ins
        AFTER INSERT ON records_record BEGIN
        {sqlite_bump("NEW.workspace_id", "meaning:records")} END""",
    "records_record_meaning_upd": f"""CREATE TRIGGER records_record_meaning_upd
        AFTER UPDATE ON records_record WHEN {RECORD_MOVED} BEGIN
        {sqlite_bump("NEW.workspace_id", "meaning:records")} END""",
    "records_record_meaning_del": f"""CREATE TRIGGER records_record_meaning_del
        AFTER DELETE ON records_record BEGIN
        {sqlite_bump("OLD.workspace_id", "meaning:records", create=False)} END""",
    "records_recordembedding_ins": f"""CREATE TRIGGER records_recordembedding_ins
        AFTER INSERT ON records_recordembedding BEGIN
        {sqlite_bump("NEW.workspace_id", "meaning:vectors")} END""",
    "records_recordembedding_upd": f"""CREATE TRIGGER records_recordembedding_upd
        AFTER UPDATE ON records_recordembedding BEGIN
        {sqlite_bump("NEW.workspace_id", "meaning:vectors")} END""",
    "records_recordembedding_del": f"""CREATE TRIGGER records_recordembedding_del
        AFTER DELETE ON records_recordembedding BEGIN
        {sqlite_bump("OLD.workspace_id", "meaning:vectors", create=False)} END""",
}

POSTGRES_STATEMENTS = [
    """CREATE OR REPLACE FUNCTION anchor_record_meaning() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            PERFORM anchor_bump(NEW.workspace_id, 'meaning:records');
        ELSIF TG_OP = 'DELETE' THEN
            -- Only a counter that exists: see sqlite_bump.
            PERFORM anchor_bump_existing(OLD.workspace_id, 'meaning:records');
        ELSIF OLD.version IS DISTINCT FROM NEW.version
              OR OLD.title IS DISTINCT FROM NEW.title
              OR OLD.archived_at IS DISTINCT FROM NEW.archived_at
              OR OLD.collection_id IS DISTINCT FROM NEW.collection_id THEN
            PERFORM anchor_bump(NEW.workspace_id, 'meaning:records');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_record_meaning AFTER INSERT OR UPDATE OR DELETE ON records_record
    FOR EACH ROW EXECUTE FUNCTION anchor_record_meaning()""",
    """CREATE OR REPLACE FUNCTION anchor_embedding_meaning() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_existing(OLD.workspace_id, 'meaning:vectors');
        ELSE
            PERFORM anchor_bump(NEW.workspace_id, 'meaning:vectors');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_recordembedding_meaning AFTER INSERT OR UPDATE OR DELETE
    ON records_recordembedding FOR EACH ROW EXECUTE FUNCTION anchor_embedding_meaning()""",
]


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        statements = []
        for name, create in SQLITE_TRIGGERS.items():
            statements += [f"DROP TRIGGER IF EXISTS {name}", create]
    elif vendor == "postgresql":
        statements = POSTGRES_STATEMENTS
    else:
        raise RuntimeError(f"Anchor supports SQLite and PostgreSQL, not {vendor}.")
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("records", "0009_dry_run_counters")]

    operations = [
        migrations.CreateModel(
            name="RecordEmbedding",
            fields=[
                (
                    "record",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="embedding",
                        serialize=False,
                        to="records.record",
                    ),
                ),
                ("model_name", models.CharField(max_length=100)),
                ("model_version", models.CharField(max_length=50)),
                ("record_version", models.PositiveIntegerField()),
                ("vector", models.BinaryField()),
                ("scale", models.FloatField()),
                ("computed_at", models.DateTimeField()),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="records.workspace",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["workspace"], name="record_embedding_ws")],
            },
        ),
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
