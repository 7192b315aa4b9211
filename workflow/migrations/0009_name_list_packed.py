"""The stored name list in its compact layout: record IDs packed, displays marked.

Rows of the earlier layout are a cache, rebuilt from the records on the next load, so they are
deleted rather than converted. On PostgreSQL the long columns are kept uncompressed: reading
them then costs no decompression, and the packed IDs (random bytes) would not compress anyway.
"""

from django.db import migrations, models


def forget_stored_lists(apps, schema_editor):
    apps.get_model("workflow", "StoredNameList").objects.all().delete()


UNCOMPRESSED = """
ALTER TABLE workflow_storednamelist
    ALTER COLUMN record_ids SET STORAGE EXTERNAL,
    ALTER COLUMN names SET STORAGE EXTERNAL,
    ALTER COLUMN displays SET STORAGE EXTERNAL
"""
COMPRESSED = """
ALTER TABLE workflow_storednamelist
    ALTER COLUMN record_ids SET STORAGE EXTENDED,
    ALTER COLUMN names SET STORAGE EXTENDED,
    ALTER COLUMN displays SET STORAGE EXTENDED
"""


def storage(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("workflow", "0008_stored_name_list"),
    ]

    operations = [
        migrations.RunPython(forget_stored_lists, forget_stored_lists),
        migrations.RemoveField(model_name="storednamelist", name="record_ids"),
        migrations.AddField(
            model_name="storednamelist",
            name="record_ids",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="storednamelist",
            name="display_marks",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="storednamelist",
            name="layout",
            field=models.PositiveSmallIntegerField(default=2),
        ),
        migrations.RunPython(storage(UNCOMPRESSED), storage(COMPRESSED)),
    ]
