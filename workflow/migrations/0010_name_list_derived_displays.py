"""The stored name list's layout 3: a display its name title-cased gives back is stored empty.

Rows of layout 2 are read as no row and stored again on the next load (they are a cache), so
only the column's default moves.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("workflow", "0009_name_list_packed"),
    ]

    operations = [
        migrations.AlterField(
            model_name="storednamelist",
            name="layout",
            field=models.PositiveSmallIntegerField(default=3),
        ),
    ]
