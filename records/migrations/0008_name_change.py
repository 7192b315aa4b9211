"""The names log: every move of a names counter appends which record it was for.

The record and alias triggers of 0002/0005 move names:<collection> and names:* once per change;
they now also append a records_namechange row at the value each counter moved to (a delete
still moves only a counter that exists, and logs only then). Nothing else changes: the same
moves, in the same statements.
"""

from django.db import migrations, models

SQLITE_LOG = """
INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, {record} FROM records_revisioncounter
    WHERE workspace_id = {ws} AND key = {key};
"""
SQLITE_CREATE = """
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT {ws}, {key}, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = {ws});
"""
SQLITE_MOVE = """
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = {ws} AND key = {key};
"""


def sqlite_names(ws: str, key: str, record: str, *, create: bool = True) -> str:
    """One move of a names counter, and its log row."""
    fields = {"ws": ws, "key": key, "record": record}
    steps = ([SQLITE_CREATE] if create else []) + [SQLITE_MOVE, SQLITE_LOG]
    return "".join(step.format(**fields) for step in steps)


def sqlite_both(ws: str, collection: str, record: str, *, create: bool = True) -> str:
    return sqlite_names(ws, f"'names:' || {collection}", record, create=create) + sqlite_names(
        ws, "'names:*'", record, create=create
    )


ALIAS_COLLECTION = "(SELECT collection_id FROM records_record WHERE id = {row}.record_id)"

SQLITE_TRIGGERS = {
    "records_record_names_ins": f"""CREATE TRIGGER records_record_names_ins
        AFTER INSERT ON records_record BEGIN
        {sqlite_both("NEW.workspace_id", "NEW.collection_id", "NEW.id")} END""",
    "records_record_names_upd": f"""CREATE TRIGGER records_record_names_upd
        AFTER UPDATE ON records_record
        WHEN OLD.title IS NOT NEW.title OR OLD.archived_at IS NOT NEW.archived_at
          OR OLD.collection_id IS NOT NEW.collection_id BEGIN
        {sqlite_both("NEW.workspace_id", "OLD.collection_id", "NEW.id")}
        {sqlite_names("NEW.workspace_id", "'names:' || NEW.collection_id", "NEW.id")} END""",
    "records_record_names_del": f"""CREATE TRIGGER records_record_names_del
        AFTER DELETE ON records_record BEGIN
        {sqlite_both("OLD.workspace_id", "OLD.collection_id", "OLD.id", create=False)} END""",
    "records_recordalias_ins": f"""CREATE TRIGGER records_recordalias_ins
        AFTER INSERT ON records_recordalias BEGIN
        {sqlite_both("NEW.workspace_id", ALIAS_COLLECTION.format(row="NEW"), "NEW.record_id")}
        END""",
    "records_recordalias_upd": f"""CREATE TRIGGER records_recordalias_upd
        AFTER UPDATE ON records_recordalias BEGIN
        {sqlite_both("NEW.workspace_id", ALIAS_COLLECTION.format(row="NEW"), "NEW.record_id")}
        END""",
    "records_recordalias_del": f"""CREATE TRIGGER records_recordalias_del
        AFTER DELETE ON records_recordalias BEGIN
        {
        sqlite_both(
            "OLD.workspace_id",
            ALIAS_COLLECTION.format(row="OLD"),
            "OLD.record_id",
            create=False,
        )
    }
        END""",
}

POSTGRES_STATEMENTS = [
    """CREATE OR REPLACE FUNCTION anchor_bump_names(
        ws varchar, counter_key varchar, rec varchar, create_missing boolean)
    RETURNS void AS $$
    DECLARE moved bigint;
    BEGIN
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
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_names() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:' || NEW.collection_id, NEW.id,
                true);
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:*', NEW.id, true);
        ELSIF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_names(OLD.workspace_id, 'names:' || OLD.collection_id, OLD.id,
                false);
            PERFORM anchor_bump_names(OLD.workspace_id, 'names:*', OLD.id, false);
        ELSIF OLD.title IS DISTINCT FROM NEW.title
              OR OLD.archived_at IS DISTINCT FROM NEW.archived_at
              OR OLD.collection_id IS DISTINCT FROM NEW.collection_id THEN
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:' || OLD.collection_id, NEW.id,
                true);
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:' || NEW.collection_id, NEW.id,
                true);
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:*', NEW.id, true);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_alias_names() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_names(OLD.workspace_id, 'names:' || collection_id,
                OLD.record_id, false)
                FROM records_record WHERE id = OLD.record_id;
            PERFORM anchor_bump_names(OLD.workspace_id, 'names:*', OLD.record_id, false);
        ELSE
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:' || collection_id,
                NEW.record_id, true)
                FROM records_record WHERE id = NEW.record_id;
            PERFORM anchor_bump_names(NEW.workspace_id, 'names:*', NEW.record_id, true);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
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
    dependencies = [("records", "0007_audit_action_index")]

    operations = [
        migrations.CreateModel(
            name="NameChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("workspace_id", models.CharField(max_length=64)),
                ("key", models.CharField(max_length=60)),
                ("revision", models.BigIntegerField()),
                ("record_id", models.CharField(max_length=36)),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["workspace_id", "key", "revision"], name="name_change_revision"
                    )
                ],
            },
        ),
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
