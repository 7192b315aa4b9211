"""The demos shared by the tests that roll back over them keep those tests apart as before.

The tests below run in this order on one worker (a file stays on one worker): those sharing
nothing first, then the hiring demo's sharers (one that writes, then one that must see the demo
exactly as built), then the sharers of a second demo defined here, which must find the hiring
demo rolled back.
"""

from __future__ import annotations

import pytest
from django.db import connection

from records import services
from records.models import AuditEvent, Collection, Record
from tests import shared_data
from tests.conftest import OTHER_WORKSPACE, make_collection, make_record
from tests.shared_data import SharedDemos

DEMO_RECORDS = 10  # four people, two openings, three applications, one interview


def _build_notes() -> Collection:
    services.workspace_ensure(OTHER_WORKSPACE)
    ctx = services.WriteContext(workspace_id=OTHER_WORKSPACE, actor_id="a", decision_reason="x")
    return make_collection(ctx, "notes")


shared_data.register("notes_demo", _build_notes)


@pytest.fixture
def notes_demo(db, shared_demos: SharedDemos) -> Collection:
    return shared_demos.for_this_test("notes_demo") or _build_notes()


def test_a_test_without_the_demo_never_sees_it(db):
    assert not Collection.objects.filter(name="people").exists()
    assert len(connection.atomic_blocks) == 1, "only the test's own transaction is open"


@pytest.mark.django_db(transaction=True)
def test_a_committing_test_builds_its_own_demo(hiring):
    assert not connection.in_atomic_block, "a transactional test runs outside any transaction"
    assert Record.objects.count() == DEMO_RECORDS


def test_a_test_of_two_demos_builds_both_itself(hiring, notes_demo):
    assert len(connection.atomic_blocks) == 1, "only the test's own transaction is open"
    assert Record.objects.count() == DEMO_RECORDS
    assert Collection.objects.filter(pk=notes_demo.pk).exists()


def test_a_sharing_test_may_write_and_change_its_objects(hiring, ctx):
    services.record_update(
        ctx=ctx, record_id=hiring.kirat.pk, changes={"team": "infra"}, expected_version=1
    )
    make_record(ctx, hiring.people, "Priya")
    hiring.kirat.title = "changed in memory"
    assert Record.objects.count() == DEMO_RECORDS + 1


def test_the_next_sharing_test_sees_the_demo_as_built(hiring):
    assert len(connection.atomic_blocks) == 2, "the demo's transaction, then the test's"
    assert Record.objects.count() == DEMO_RECORDS
    assert not Record.objects.filter(title="Priya").exists()
    kirat = Record.objects.get(pk=hiring.kirat.pk)
    assert kirat.version == 1 and "team" not in kirat.data
    assert hiring.kirat.title == "Kirat", "each test gets its own copy of the demo's objects"
    assert not AuditEvent.objects.filter(record_id=hiring.kirat.pk, kind="record.updated").exists()


def test_a_sharer_of_another_demo_finds_the_first_rolled_back(notes_demo):
    assert len(connection.atomic_blocks) == 2, "the notes demo's transaction, then the test's"
    assert list(Collection.objects.values_list("name", flat=True)) == ["notes"]
    assert Record.objects.count() == 0
