"""The reset after a test that commits leaves every table empty, triggers' rows included, and
the content types and permissions as migrate made them; it refuses what it cannot do."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import TransactionTestCase

from records import services
from records.services import WriteContext
from tests import table_reset
from tests.conftest import ACTOR, WORKSPACE, link, make_collection, make_record


def _filled_tables() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    counts = table_reset.row_counts(connection, [t for t in tables if t not in table_reset.KEPT])
    return {table: rows for table, rows in counts.items() if rows}


def _write_a_little_of_everything() -> None:
    services.workspace_ensure(WORKSPACE)
    ctx = WriteContext(workspace_id=WORKSPACE, actor_id=ACTOR, decision_reason="reset test")
    people = make_collection(ctx, "people")
    ada = make_record(ctx, people, "Ada Lovelace", role="engineer")
    grace = make_record(ctx, people, "Grace Hopper", role="admiral")
    link(ctx, ada, "knows", grace)
    User.objects.create_user("reviewer", password="x")


def test_the_teardown_in_place_is_the_reset():
    assert TransactionTestCase._fixture_teardown is table_reset._fixture_teardown  # type: ignore[attr-defined]


@pytest.mark.django_db(transaction=True)
def test_every_table_is_emptied_counters_and_logs_included():
    content_types = sorted(ContentType.objects.values_list("pk", "app_label", "model"))
    permissions = Permission.objects.count()
    _write_a_little_of_everything()
    filled = _filled_tables()
    # the triggers' own tables are among them: deleting records moves the counters again
    assert {"records_record", "records_collectioncount", "auth_user"} <= filled.keys()

    assert table_reset.empty_tables()

    assert _filled_tables() == {}
    assert sorted(ContentType.objects.values_list("pk", "app_label", "model")) == content_types
    assert Permission.objects.count() == permissions > 0


@pytest.mark.django_db(transaction=True)
def test_a_table_with_many_rows_is_truncated_with_what_refers_to_it(monkeypatch):
    monkeypatch.setattr(table_reset, "MANY_ROWS", 1)  # every filled table counts as large
    _write_a_little_of_everything()

    assert table_reset.empty_tables()

    assert _filled_tables() == {}
    assert ContentType.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_without_content_types_it_changes_nothing_and_leaves_it_to_flush():
    _write_a_little_of_everything()
    before = _filled_tables()
    ContentType.objects.all().delete()  # as a test that dropped them would leave it

    assert not table_reset.empty_tables()

    assert _filled_tables() == before  # rolled back: the caller flushes instead
    table_reset._fixture_teardown(TransactionTestCase())
    assert _filled_tables() == {}
    assert ContentType.objects.filter(app_label="records", model="record").exists()
