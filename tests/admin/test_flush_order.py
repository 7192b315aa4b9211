"""Why the browser tests' teardown used to fail now and then: the database flush after a
live-server test deletes every table in an order that changes from run to run (SQLite's flush
is one DELETE per table, taken from a set). When the counters went first and records, links or
collections after them, the delete triggers recreated counters for a workspace deleted a moment
later, and the flush's commit failed its foreign-key check. Deletes now only move counters that
exist, so any order leaves nothing behind. This replays the order that failed, on both backends.
"""

from __future__ import annotations

from django.db import connection

from records import services
from records.models import RevisionCounter, Workspace

FIRST = RevisionCounter._meta.db_table
LAST = Workspace._meta.db_table


def delete_everything_counters_first() -> None:
    tables = connection.introspection.django_table_names(only_existing=True)
    middle = sorted(t for t in tables if t not in (FIRST, LAST))
    with connection.cursor() as cursor:
        for table in [FIRST, *middle, LAST]:
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")


def foreign_key_violations() -> list[tuple]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            return list(cursor.execute("PRAGMA foreign_key_check").fetchall())
        # Deferred constraints are checked now instead of at commit.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        return []


def test_deleting_counters_before_the_rows_that_move_them_leaves_no_orphan(hiring, ctx):
    services.record_alias_add(
        ctx=ctx, record_id=hiring.kirat.pk, alias="Kirat S.", expected_version=1
    )
    services.collection_alias_add(ctx=ctx, collection_id=hiring.people.pk, alias="candidates")
    assert RevisionCounter.objects.filter(key__startswith="links:").exists()

    delete_everything_counters_first()

    assert foreign_key_violations() == []
    assert list(RevisionCounter.objects.values_list("workspace_id", "key")) == []


def test_a_delete_still_moves_the_counters_that_exist(hiring, ctx):
    """The other half: removing a link or a record still makes reviews that saw it stale."""
    link = hiring.kirat_backend.outgoing.first()
    assert link is not None
    key = f"links:{link.source_id}"
    before = RevisionCounter.objects.get(workspace_id=ctx.workspace_id, key=key).value
    services.relationship_delete(ctx=ctx, relationship_id=link.pk)
    after = RevisionCounter.objects.get(workspace_id=ctx.workspace_id, key=key).value
    assert after == before + 1
