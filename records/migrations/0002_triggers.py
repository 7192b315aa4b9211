"""Revision counters, the full-text index and append-only audit, maintained by triggers.

Triggers run inside the writing transaction whatever writes the row (services, admin,
loaddata, raw SQL), so a rolled-back write or a prepare-time preview leaves nothing behind and
no write path can skip a counter. SQL is per vendor; the behaviour is the same.
"""

import sqlite3

from django.db import migrations

# Counter keys: names:<collection_id>, names:*, links:<record_id>, catalog.

# The EXISTS guard matters when a whole workspace is deleted (a test flush, a restore with
# --replace): a child row deleted after its workspace must not recreate a counter that points
# at the missing workspace.
SQLITE_BUMP = """
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT {ws}, {key}, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = {ws});
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = {ws} AND key = {key};
"""


def sqlite_bump(ws: str, key: str) -> str:
    return SQLITE_BUMP.format(ws=ws, key=key)


def sqlite_names(ws: str, collection: str) -> str:
    return sqlite_bump(ws, f"'names:' || {collection}") + sqlite_bump(ws, "'names:*'")


SQLITE_BODY = (
    "(SELECT coalesce(group_concat(value, ' '), '') FROM json_tree({data}) "
    "WHERE type IN ('text', 'integer', 'real'))"
)


def sqlite_fts_supported() -> bool:
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


def sqlite_statements() -> list[str]:
    alias_collection = "(SELECT collection_id FROM records_record WHERE id = {row}.record_id)"
    statements = [
        f"""CREATE TRIGGER records_record_names_ins AFTER INSERT ON records_record BEGIN
        {sqlite_names("NEW.workspace_id", "NEW.collection_id")} END""",
        f"""CREATE TRIGGER records_record_names_upd AFTER UPDATE ON records_record
        WHEN OLD.title IS NOT NEW.title OR OLD.archived_at IS NOT NEW.archived_at
          OR OLD.collection_id IS NOT NEW.collection_id BEGIN
        {sqlite_names("NEW.workspace_id", "OLD.collection_id")}
        {sqlite_bump("NEW.workspace_id", "'names:' || NEW.collection_id")} END""",
        f"""CREATE TRIGGER records_record_names_del AFTER DELETE ON records_record BEGIN
        {sqlite_names("OLD.workspace_id", "OLD.collection_id")} END""",
        f"""CREATE TRIGGER records_recordalias_ins AFTER INSERT ON records_recordalias BEGIN
        {sqlite_names("NEW.workspace_id", alias_collection.format(row="NEW"))} END""",
        f"""CREATE TRIGGER records_recordalias_upd AFTER UPDATE ON records_recordalias BEGIN
        {sqlite_names("NEW.workspace_id", alias_collection.format(row="NEW"))} END""",
        f"""CREATE TRIGGER records_recordalias_del AFTER DELETE ON records_recordalias BEGIN
        {sqlite_names("OLD.workspace_id", alias_collection.format(row="OLD"))} END""",
    ]
    for event, row in (("INSERT", "NEW"), ("DELETE", "OLD")):
        statements.append(
            f"""CREATE TRIGGER records_relationship_{event.lower()[:3]} AFTER {event}
            ON records_relationship BEGIN
            {sqlite_bump(f"{row}.workspace_id", f"'links:' || {row}.source_id")}
            {sqlite_bump(f"{row}.workspace_id", f"'links:' || {row}.target_id")} END"""
        )
    statements.append(
        f"""CREATE TRIGGER records_relationship_upd AFTER UPDATE ON records_relationship BEGIN
        {sqlite_bump("OLD.workspace_id", "'links:' || OLD.source_id")}
        {sqlite_bump("OLD.workspace_id", "'links:' || OLD.target_id")}
        {sqlite_bump("NEW.workspace_id", "'links:' || NEW.source_id")}
        {sqlite_bump("NEW.workspace_id", "'links:' || NEW.target_id")} END"""
    )
    for table in ("records_collection", "records_collectionalias"):
        for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            statements.append(
                f"""CREATE TRIGGER {table}_catalog_{event.lower()[:3]} AFTER {event} ON {table}
                BEGIN {sqlite_bump(f"{row}.workspace_id", "'catalog'")} END"""
            )
    statements.append(
        """CREATE TRIGGER records_auditevent_append_only BEFORE UPDATE ON records_auditevent
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END"""
    )
    if not sqlite_fts_supported():
        return statements
    # The FTS rowid must be stable: records_record has a text primary key, so its implicit
    # rowid may change on VACUUM. A key table with an INTEGER PRIMARY KEY gives a stable one.
    statements += [
        """CREATE TABLE records_record_fts_key (
            id INTEGER PRIMARY KEY, record_id varchar(36) NOT NULL UNIQUE)""",
        """CREATE VIRTUAL TABLE records_record_fts USING fts5(
            title, body, tokenize = 'unicode61 remove_diacritics 2')""",
        f"""CREATE TRIGGER records_record_fts_ins AFTER INSERT ON records_record BEGIN
            INSERT INTO records_record_fts_key(record_id) VALUES (NEW.id);
            INSERT INTO records_record_fts(rowid, title, body) VALUES (
                (SELECT id FROM records_record_fts_key WHERE record_id = NEW.id),
                NEW.title, {SQLITE_BODY.format(data="NEW.data")});
        END""",
        f"""CREATE TRIGGER records_record_fts_upd AFTER UPDATE ON records_record
        WHEN OLD.title IS NOT NEW.title OR OLD.data IS NOT NEW.data BEGIN
            DELETE FROM records_record_fts WHERE rowid =
                (SELECT id FROM records_record_fts_key WHERE record_id = OLD.id);
            INSERT INTO records_record_fts(rowid, title, body) VALUES (
                (SELECT id FROM records_record_fts_key WHERE record_id = NEW.id),
                NEW.title, {SQLITE_BODY.format(data="NEW.data")});
        END""",
        """CREATE TRIGGER records_record_fts_del AFTER DELETE ON records_record BEGIN
            DELETE FROM records_record_fts WHERE rowid =
                (SELECT id FROM records_record_fts_key WHERE record_id = OLD.id);
            DELETE FROM records_record_fts_key WHERE record_id = OLD.id;
        END""",
        # Backfill, for databases that already hold records when this migration runs.
        "INSERT INTO records_record_fts_key(record_id) SELECT id FROM records_record",
        f"""INSERT INTO records_record_fts(rowid, title, body)
            SELECT k.id, r.title, {SQLITE_BODY.format(data="r.data")}
            FROM records_record r JOIN records_record_fts_key k ON k.record_id = r.id""",
    ]
    return statements


POSTGRES_STATEMENTS = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    """CREATE OR REPLACE FUNCTION anchor_bump(ws varchar, counter_key varchar) RETURNS void AS $$
    BEGIN
        INSERT INTO records_revisioncounter(workspace_id, key, value) VALUES (ws, counter_key, 1)
        ON CONFLICT (workspace_id, key)
        DO UPDATE SET value = records_revisioncounter.value + 1;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION anchor_record_names() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || NEW.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:*');
        ELSIF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump(OLD.workspace_id, 'names:' || OLD.collection_id);
            PERFORM anchor_bump(OLD.workspace_id, 'names:*');
        ELSIF OLD.title IS DISTINCT FROM NEW.title
              OR OLD.archived_at IS DISTINCT FROM NEW.archived_at
              OR OLD.collection_id IS DISTINCT FROM NEW.collection_id THEN
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || OLD.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:' || NEW.collection_id);
            PERFORM anchor_bump(NEW.workspace_id, 'names:*');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_record_names AFTER INSERT OR UPDATE OR DELETE ON records_record
    FOR EACH ROW EXECUTE FUNCTION anchor_record_names()""",
    """CREATE OR REPLACE FUNCTION anchor_record_alias_names() RETURNS trigger AS $$
    DECLARE row_ws varchar; row_record varchar;
    BEGIN
        IF TG_OP = 'DELETE' THEN
            row_ws := OLD.workspace_id; row_record := OLD.record_id;
        ELSE
            row_ws := NEW.workspace_id; row_record := NEW.record_id;
        END IF;
        PERFORM anchor_bump(row_ws, 'names:' || collection_id)
            FROM records_record WHERE id = row_record;
        PERFORM anchor_bump(row_ws, 'names:*');
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_recordalias_names AFTER INSERT OR UPDATE OR DELETE
    ON records_recordalias FOR EACH ROW EXECUTE FUNCTION anchor_record_alias_names()""",
    """CREATE OR REPLACE FUNCTION anchor_relationship_links() RETURNS trigger AS $$
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            PERFORM anchor_bump(OLD.workspace_id, 'links:' || OLD.source_id);
            PERFORM anchor_bump(OLD.workspace_id, 'links:' || OLD.target_id);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            PERFORM anchor_bump(NEW.workspace_id, 'links:' || NEW.source_id);
            PERFORM anchor_bump(NEW.workspace_id, 'links:' || NEW.target_id);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_relationship_links AFTER INSERT OR UPDATE OR DELETE
    ON records_relationship FOR EACH ROW EXECUTE FUNCTION anchor_relationship_links()""",
    """CREATE OR REPLACE FUNCTION anchor_catalog() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM anchor_bump(OLD.workspace_id, 'catalog');
        ELSE
            PERFORM anchor_bump(NEW.workspace_id, 'catalog');
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_collection_catalog AFTER INSERT OR UPDATE OR DELETE
    ON records_collection FOR EACH ROW EXECUTE FUNCTION anchor_catalog()""",
    """CREATE TRIGGER records_collectionalias_catalog AFTER INSERT OR UPDATE OR DELETE
    ON records_collectionalias FOR EACH ROW EXECUTE FUNCTION anchor_catalog()""",
    """CREATE OR REPLACE FUNCTION anchor_audit_append_only() RETURNS trigger AS $$
    BEGIN
        RAISE EXCEPTION 'audit events are append-only';
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_auditevent_append_only BEFORE UPDATE ON records_auditevent
    FOR EACH ROW EXECUTE FUNCTION anchor_audit_append_only()""",
    # Full-text document: title weighted A, every string or number value in the data weighted
    # B (keys are not indexed); accents folded with unaccent, 'simple' so words are not stemmed.
    """CREATE TABLE records_record_search (
        record_id varchar(36) PRIMARY KEY, document tsvector NOT NULL)""",
    "CREATE INDEX records_record_search_gin ON records_record_search USING GIN (document)",
    """CREATE OR REPLACE FUNCTION anchor_search_document(title text, data jsonb)
    RETURNS tsvector AS $$
        SELECT setweight(to_tsvector('simple', unaccent(coalesce(title, ''))), 'A')
            || setweight(to_tsvector('simple', unaccent(coalesce((
                SELECT string_agg(v #>> '{}', ' ')
                FROM jsonb_path_query(data, 'strict $.**') AS v
                WHERE jsonb_typeof(v) IN ('string', 'number')), ''))), 'B')
    $$ LANGUAGE sql STABLE""",
    """CREATE OR REPLACE FUNCTION anchor_record_search() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM records_record_search WHERE record_id = OLD.id;
        ELSIF TG_OP = 'INSERT' OR OLD.title IS DISTINCT FROM NEW.title
              OR OLD.data IS DISTINCT FROM NEW.data THEN
            INSERT INTO records_record_search(record_id, document)
            VALUES (NEW.id, anchor_search_document(NEW.title, NEW.data))
            ON CONFLICT (record_id) DO UPDATE SET document = EXCLUDED.document;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER records_record_search AFTER INSERT OR UPDATE OR DELETE ON records_record
    FOR EACH ROW EXECUTE FUNCTION anchor_record_search()""",
    """INSERT INTO records_record_search(record_id, document)
    SELECT id, anchor_search_document(title, data) FROM records_record""",
]


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        statements = sqlite_statements()
    elif vendor == "postgresql":
        statements = POSTGRES_STATEMENTS
    else:
        raise RuntimeError(f"Anchor supports SQLite and PostgreSQL, not {vendor}.")
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("records", "0001_initial")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
