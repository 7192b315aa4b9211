"""The verified head of an agenda's event log, and the triggers that clear it.

Each agenda command re-hashes only the events from its agenda's verified head on. Events are
append-only, so any other change to one (an UPDATE or DELETE, or an INSERT at or before the
head) clears the head, and the next command checks the whole log again.
"""

from django.db import migrations, models

CLEAR = "UPDATE workflow_agenda SET verified_sequence = 0, verified_hash = '' WHERE id = {}"

SQLITE_TRIGGERS = {
    "workflow_agendaevent_unverify_ins": f"""CREATE TRIGGER workflow_agendaevent_unverify_ins
    AFTER INSERT ON workflow_agendaevent WHEN NEW.sequence <=
        (SELECT verified_sequence FROM workflow_agenda WHERE id = NEW.agenda_id)
    BEGIN {CLEAR.format("NEW.agenda_id")}; END""",
    "workflow_agendaevent_unverify_upd": f"""CREATE TRIGGER workflow_agendaevent_unverify_upd
    AFTER UPDATE ON workflow_agendaevent
    BEGIN {CLEAR.format("OLD.agenda_id")}; {CLEAR.format("NEW.agenda_id")}; END""",
    "workflow_agendaevent_unverify_del": f"""CREATE TRIGGER workflow_agendaevent_unverify_del
    AFTER DELETE ON workflow_agendaevent
    BEGIN {CLEAR.format("OLD.agenda_id")}; END""",
}

POSTGRES_STATEMENTS = [
    f"""CREATE OR REPLACE FUNCTION anchor_agenda_event_unverify() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            {CLEAR.format("NEW.agenda_id")} AND NEW.sequence <= verified_sequence;
            RETURN NULL;
        END IF;
        {CLEAR.format("OLD.agenda_id")};
        IF TG_OP = 'UPDATE' THEN
            {CLEAR.format("NEW.agenda_id")};
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS workflow_agendaevent_unverify ON workflow_agendaevent",
    """CREATE TRIGGER workflow_agendaevent_unverify AFTER INSERT OR UPDATE OR DELETE
    ON workflow_agendaevent FOR EACH ROW EXECUTE FUNCTION anchor_agenda_event_unverify()""",
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


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {name}" for name in SQLITE_TRIGGERS]
    else:
        statements = [
            "DROP TRIGGER IF EXISTS workflow_agendaevent_unverify ON workflow_agendaevent",
            "DROP FUNCTION IF EXISTS anchor_agenda_event_unverify()",
        ]
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("workflow", "0011_prepared_action_credential")]

    operations = [
        migrations.AddField(
            model_name="agenda",
            name="verified_hash",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="agenda",
            name="verified_sequence",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(install, uninstall),
    ]
