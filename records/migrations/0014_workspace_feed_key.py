"""Each workspace's own key for sealing change-feed positions (records.selectors.feed_positions).

The column is added in SQL with an empty default, then filled row by row: Django's AddField
would rebuild the table on SQLite, which the triggers naming records_workspace do not survive,
and a callable default in AddField gives every existing row the same value.
"""

import secrets

from django.db import migrations, models

import records.models.store


def give_each_workspace_a_key(apps, schema_editor):
    Workspace = apps.get_model("records", "Workspace")
    for workspace_id in Workspace.objects.values_list("id", flat=True):
        Workspace.objects.filter(id=workspace_id).update(feed_key=secrets.token_hex(32))


class Migration(migrations.Migration):
    dependencies = [("records", "0013_audit_credential")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE records_workspace ADD COLUMN feed_key varchar(64) NOT NULL "
                    "DEFAULT ''",
                    "ALTER TABLE records_workspace DROP COLUMN feed_key",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="workspace",
                    name="feed_key",
                    field=models.CharField(
                        default=records.models.store.new_feed_key, editable=False, max_length=64
                    ),
                )
            ],
        ),
        migrations.RunPython(give_each_workspace_a_key, migrations.RunPython.noop),
    ]
