"""A delete only moves a revision counter that exists; it never creates one.

0002's delete triggers used insert-or-bump, guarded by "the workspace still exists". That guard
holds only when the workspace row goes before its children. A bulk delete that empties the
counters first, then records, links or collections, then workspaces (SQLite's test flush, which
deletes tables in an order that changes from run to run) recreated counters that pointed at a
workspace deleted a moment later, and the commit failed its deferred foreign-key check.

Every deleted row was inserted, and its insert created the counters it moves, so in a running
store the row is always there to bump. The only time it is missing is when the counters
themselves are being cleared, and then a recreated counter would outlive its workspace.
Inserts and updates keep insert-or-bump.
"""

from django.db import migrations

SQLITE_BUMP_EXISTING = """
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = {ws} AND key = {key};
"""


def _bump(key: str) -> str:
    return SQLITE_BUMP_EXISTING.format(ws="OLD.workspace_id", key=key)


ALIAS_COLLECTION = "(SELECT collection_id FROM records_record WHERE id = OLD.record_id)"

SQLITE_DELETE_TRIGGERS = {
    "records_record_names_del": f"""CREATE TRIGGER records_record_names_del
        AFTER DELETE ON records_record BEGIN
        {_bump("'names:' || OLD.collection_id")}{_bump("'names:*'")} END""",
    "records_recordalias_del": f"""CREATE TRIGGER records_recordalias_del
        AFTER DELETE ON records_recordalias BEGIN
        {_bump(f"'names:' || {ALIAS_COLLECTION}")}{_bump("'names:*'")} END""",
    "records_relationship_del": f"""CREATE TRIGGER records_relationship_del
        AFTER DELETE ON records_relationship BEGIN
        {_bump("'links:' || OLD.source_id")}{_bump("'links:' || OLD.target_id")} END""",
    "records_collection_catalog_del": f"""CREATE TRIGGER records_collection_catalog_del
        AFTER DELETE ON records_collection BEGIN {_bump("'catalog'")} END""",
    "records_collectionalias_catalog_del": f"""CREATE TRIGGER
        records_collectionalias_catalog_del AFTER DELETE ON records_collectionalias
        BEGIN {_bump("'catalog'")} END""",
}

POSTGRES_STATEMENTS = [
    """CREATE OR REPLACE FUNCTION anchor_bump_existing(ws varchar, counter_key varchar)
    RETURNS void AS $$
    BEGIN
        UPDATE records_revisioncounter SET value = value + 1
        WHERE workspace_id = ws AND key = counter_key;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_names() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || NEW.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:*');
        ELSIF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_existing(OLD.workspace_id, 'names:' || OLD.collection_id);
            PERFORM anchor_bump_existing(OLD.workspace_id, 'names:*');
        ELSIF OLD.title IS DISTINCT FROM NEW.title
              OR OLD.archived_at IS DISTINCT FROM NEW.archived_at
              OR OLD.collection_id IS DISTINCT FROM NEW.collection_id THEN
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || OLD.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || NEW.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:*');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_alias_names() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_existing(OLD.workspace_id, 'names:' || collection_id)
                FROM records_record WHERE id = OLD.record_id;
            PERFORM anchor_bump_existing(OLD.workspace_id, 'names:*');
        ELSE
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || collection_id)
                FROM records_record WHERE id = NEW.record_id;
            PERFORM anchor_bump(NEW.workspace_id, 'names:*');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_relationship_links() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_existing(OLD.workspace_id, 'links:' || OLD.source_id);
            PERFORM anchor_bump_existing(OLD.workspace_id, 'links:' || OLD.target_id);
        ELSIF TG_OP = 'UPDATE' THEN
            PERFORM anchor_bump(OLD.workspace_id, 'links:' || OLD.source_id);
            PERFORM anchor_bump(OLD.workspace_id, 'links:' || OLD.target_id);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            PERFORM anchor_bump(NEW.workspace_id, 'links:' || NEW.source_id);
            PERFORM anchor_bump(NEW.workspace_id, 'links:' || NEW.target_id);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_catalog() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump_existing(OLD.workspace_id, 'catalog');
        ELSE
            PERFORM anchor_bump(NEW.workspace_id, 'catalog');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
]


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        statements = []
        for name, create in SQLITE_DELETE_TRIGGERS.items():
            statements += [f"DROP TRIGGER IF EXISTS {name}", create]
    elif vendor == "postgresql":
        statements = POSTGRES_STATEMENTS
    else:
        raise RuntimeError(f"Anchor supports SQLite and PostgreSQL, not {vendor}.")
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("records", "0004_membership_and_tokens")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
