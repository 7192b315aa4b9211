"""The stored active record counts stay equal to a real count, whatever writes the records.

Each test compares the trigger-kept counts of every collection, in both workspaces, with a
GROUP BY over the records themselves, after every kind of write; and list_collections reads
them without touching the records table.
"""

from __future__ import annotations

import importlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from records import selectors, services
from records.dry_run import counters_left_alone
from records.models import Collection, CollectionCount, CollectionCountChange, Record
from records.selectors.active_counts import active_counts
from records.services import NewRecord
from tests.conftest import OTHER_WORKSPACE, WORKSPACE, make_collection, make_record

backfill_migration = importlib.import_module("records.migrations.0011_collection_count")


def true_counts(workspace_id: str) -> dict[str, int]:
    """What the stored counts must say: every collection, counted from its records."""
    counted = dict(
        Record.objects.filter(workspace_id=workspace_id, archived_at__isnull=True)
        .values("collection_id")
        .annotate(n=Count("id"))
        .values_list("collection_id", "n")
        .order_by()
    )
    ids = Collection.objects.filter(workspace_id=workspace_id).values_list("id", flat=True)
    return {collection_id: counted.get(collection_id, 0) for collection_id in ids}


def stored_counts(workspace_id: str) -> dict[str, int]:
    ids = Collection.objects.filter(workspace_id=workspace_id).values_list("id", flat=True)
    return active_counts(workspace_id, ids)


def assert_counts_true() -> None:
    for workspace_id in (WORKSPACE, OTHER_WORKSPACE):
        assert stored_counts(workspace_id) == true_counts(workspace_id), workspace_id


@pytest.fixture
def seeded(ctx, other_ctx):
    """Two collections here, one in the other workspace, a few records in each."""
    people = make_collection(ctx, "people")
    tasks = make_collection(ctx, "tasks")
    elsewhere = make_collection(other_ctx, "people")
    for title in ("Kirat", "Priya", "Abhishek"):
        make_record(ctx, people, title)
    make_record(ctx, tasks, "Write the plan")
    for title in ("Someone", "Someone else"):
        make_record(other_ctx, elsewhere, title)
    return people, tasks, elsewhere


def test_counts_follow_create_update_archive_unarchive_move_and_delete(ctx, seeded):
    people, tasks, elsewhere = seeded
    assert stored_counts(WORKSPACE) == {people.pk: 3, tasks.pk: 1}
    assert stored_counts(OTHER_WORKSPACE) == {elsewhere.pk: 2}

    kirat = Record.objects.get(collection=people, title="Kirat")
    services.record_update(ctx=ctx, record_id=kirat.pk, changes={"x": 1}, expected_version=1)
    assert stored_counts(WORKSPACE)[people.pk] == 3, "an update moves nothing"

    services.record_archive(ctx=ctx, record_id=kirat.pk, expected_version=2)
    assert stored_counts(WORKSPACE)[people.pk] == 2
    # No service unarchives, moves or deletes; the triggers cover any writer of the rows.
    Record.objects.filter(pk=kirat.pk).update(archived_at=None)
    assert stored_counts(WORKSPACE)[people.pk] == 3
    Record.objects.filter(pk=kirat.pk).update(collection=tasks)
    assert stored_counts(WORKSPACE) == {people.pk: 2, tasks.pk: 2}
    Record.objects.filter(pk=kirat.pk).update(archived_at=timezone.now(), collection=people)
    assert stored_counts(WORKSPACE) == {people.pk: 2, tasks.pk: 1}, "archived, moved: no count"
    Record.objects.filter(collection=people).delete()
    assert stored_counts(WORKSPACE) == {people.pk: 0, tasks.pk: 1}
    assert stored_counts(OTHER_WORKSPACE) == {elsewhere.pk: 2}
    assert_counts_true()


def test_an_empty_collection_counts_zero_and_its_row_goes_with_it(ctx, seeded):
    people, tasks, _ = seeded
    empty = make_collection(ctx, "empty")
    listed = {
        c["collection_id"]: c["active_record_count"]
        for c in selectors.collection_list(workspace_id=WORKSPACE)["collections"]
    }
    assert listed == {empty.pk: 0, people.pk: 3, tasks.pk: 1}
    Record.objects.filter(collection=tasks).delete()
    Collection.objects.filter(pk=tasks.pk).delete()
    assert not CollectionCount.objects.filter(collection_id=tasks.pk).exists()
    assert_counts_true()


def test_a_bulk_import_counts_every_row(ctx, seeded):
    people, _, _ = seeded
    rows = [NewRecord(ctx, f"Imported {index}", {"n": index}) for index in range(25)]
    services.record_create_many(collection_id=people.pk, rows=rows)
    assert stored_counts(WORKSPACE)[people.pk] == 28
    assert_counts_true()


def test_a_rolled_back_write_leaves_the_count_as_it_was(ctx, seeded):
    people, _, _ = seeded
    with pytest.raises(RuntimeError), transaction.atomic():
        make_record(ctx, people, "Never kept")
        assert stored_counts(WORKSPACE)[people.pk] == 4
        raise RuntimeError("roll back")
    assert stored_counts(WORKSPACE)[people.pk] == 3
    assert_counts_true()


def test_a_dry_run_counts_inside_it_and_not_after_its_rollback(ctx, seeded):
    people, _, _ = seeded
    with pytest.raises(RuntimeError), transaction.atomic(), counters_left_alone():
        make_record(ctx, people, "Previewed")
        assert stored_counts(WORKSPACE)[people.pk] == 4, "the preview sees its own write"
        raise RuntimeError("roll the dry run back")
    assert stored_counts(WORKSPACE)[people.pk] == 3
    assert not CollectionCountChange.objects.exists()
    assert_counts_true()


def test_writes_a_caller_keeps_from_a_dry_run_stay_counted(ctx, seeded):
    people, _, _ = seeded
    with transaction.atomic(), counters_left_alone():  # left normally: its writes are kept
        make_record(ctx, people, "Kept from a dry run")
    make_record(ctx, people, "Written after")
    assert stored_counts(WORKSPACE)[people.pk] == 5
    assert_counts_true()


@pytest.mark.postgres
def test_a_dry_run_on_postgresql_leaves_the_count_row_unlocked(ctx, seeded):
    """Its moves are appended, not written to the shared row (which a commit may hold)."""
    people, _, _ = seeded
    row_before = CollectionCount.objects.get(collection_id=people.pk).active
    with pytest.raises(RuntimeError), transaction.atomic(), counters_left_alone():
        make_record(ctx, people, "Previewed")
        assert CollectionCount.objects.get(collection_id=people.pk).active == row_before
        assert list(CollectionCountChange.objects.values_list("collection_id", "delta")) == [
            (people.pk, 1)
        ]
        raise RuntimeError("roll the dry run back")
    assert not CollectionCountChange.objects.exists()


def test_a_restore_with_replace_leaves_the_counts_right(ctx, seeded, tmp_path):
    people, _, elsewhere = seeded
    services.record_archive(
        ctx=ctx, record_id=Record.objects.get(title="Priya").pk, expected_version=1
    )
    before = stored_counts(WORKSPACE)
    path = tmp_path / "export.jsonl"
    call_command("export_workspace", str(path), verbosity=0)
    call_command("import_workspace", str(path), "--replace", stdout=StringIO())
    assert stored_counts(WORKSPACE) == before
    assert before[people.pk] == 2
    assert stored_counts(OTHER_WORKSPACE) == {elsewhere.pk: 2}
    assert_counts_true()


def test_the_migration_backfills_counts_of_records_already_stored(seeded):
    CollectionCount.objects.all().delete()
    assert stored_counts(WORKSPACE) != true_counts(WORKSPACE)
    with connection.cursor() as cursor:
        cursor.execute(backfill_migration.BACKFILL)
    assert_counts_true()


def test_list_collections_reads_no_record_and_a_fixed_number_of_queries(ctx, other_ctx):
    collection = make_collection(ctx, "expenses")
    make_record(ctx, collection, "Taxi")
    with CaptureQueriesContext(connection) as few:
        selectors.collection_list(workspace_id=WORKSPACE)
    for index in range(20):
        extra = make_collection(ctx, f"bucket {index}")
        for item in range(3):
            make_record(ctx, extra, f"Item {index}.{item}")
        make_record(other_ctx, make_collection(other_ctx, f"theirs {index}"), "Theirs")
    with CaptureQueriesContext(connection) as many:
        result = selectors.collection_list(workspace_id=WORKSPACE)
    assert len(many) == len(few) == 3
    assert not [q["sql"] for q in many if "records_record" in q["sql"]]
    counts = {c["name"]: c["active_record_count"] for c in result["collections"]}
    assert counts == {"expenses": 1} | {f"bucket {index}": 3 for index in range(20)}
