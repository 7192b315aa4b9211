"""Audit events name the credential an agent acted through over HTTP (records.acting).

Nullable, so SQLite adds the columns in place: the table and its append-only trigger stay.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("records", "0012_search_pending_list"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="credential",
            field=models.CharField(blank=True, max_length=60, null=True),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="credential_name",
            field=models.CharField(blank=True, max_length=300, null=True),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(
                condition=models.Q(("credential__isnull", False)),
                fields=["credential", "created_at"],
                name="audit_credential",
            ),
        ),
    ]
