"""Full-text searches stay fast after bulk writes (PostgreSQL): a small GIN pending list.

The full-text index takes new entries into an unsorted pending list (GIN fastupdate) and merges
them into the index only when the list passes gin_pending_list_limit (4 MB by default) or a
vacuum runs. Every full-text query reads the whole list: after a bulk write of 20,000 records
it held 7,000 entries and a search by words took 19 ms instead of 0.9 ms at 100,000 records,
until autovacuum came by. At 64 kB (the least PostgreSQL allows) the list holds a few dozen
entries; the same 20,000-record bulk write took as long (11 s), as merging small batches is
about as cheap as merging one large one. SQLite is unchanged: FTS5 has no such list.
"""

from django.db import migrations

INDEX = "records_record_search_gin"


def shrink(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER INDEX {INDEX} SET (gin_pending_list_limit = 64)")


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER INDEX {INDEX} RESET (gin_pending_list_limit)")


class Migration(migrations.Migration):
    dependencies = [("records", "0011_collection_count")]

    operations = [migrations.RunPython(shrink, restore)]
