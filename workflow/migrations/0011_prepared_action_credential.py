"""A prepared action keeps the credential it was prepared through, for its audit events."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("workflow", "0010_name_list_derived_displays"),
    ]

    operations = [
        migrations.AddField(
            model_name="preparedaction",
            name="credential",
            field=models.CharField(blank=True, max_length=60, null=True),
        ),
        migrations.AddField(
            model_name="preparedaction",
            name="credential_name",
            field=models.CharField(blank=True, max_length=300, null=True),
        ),
    ]
