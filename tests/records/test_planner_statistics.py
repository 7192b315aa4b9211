"""SQLite's planner looks a few records of a large workspace up by ID once its tables are
measured, and the measuring happens only when a table is new to it or has outgrown it."""

from __future__ import annotations

import pytest
from django.db import connection

from records import planner_statistics
from tests.conftest import make_collection, make_record

LOOKUP = "SELECT collection_id FROM records_record WHERE workspace_id = %s AND id IN (%s, %s, %s)"


def plan(workspace_id: str, ids: list[str]) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {LOOKUP}", [workspace_id, *ids])
        return " ".join(str(row[-1]) for row in cursor.fetchall())


@pytest.fixture
def few_rows_count(monkeypatch):
    monkeypatch.setattr(planner_statistics, "MIN_ROWS", 5)


@pytest.mark.sqlite
def test_a_lookup_by_ids_uses_the_primary_key_once_measured(ctx, few_rows_count):
    people = make_collection(ctx, "people")
    ids = [make_record(ctx, people, f"Person {n}").pk for n in range(120)][:3]
    unmeasured = plan(ctx.workspace_id, ids)
    assert "(workspace_id=?)" in unmeasured, unmeasured  # the whole workspace's rows

    refreshed = planner_statistics.refresh()

    assert "records_record" in refreshed
    measured = plan(ctx.workspace_id, ids)
    assert "(id=?)" in measured and "workspace_id=?" not in measured, measured


@pytest.mark.sqlite
def test_tables_are_measured_again_only_when_grown_tenfold(ctx, few_rows_count):
    people = make_collection(ctx, "people")
    for n in range(6):
        make_record(ctx, people, f"Person {n}")
    assert "records_record" in planner_statistics.refresh()
    assert "records_record" not in planner_statistics.stale_tables()
    for n in range(6, 50):
        make_record(ctx, people, f"Person {n}")
    assert "records_record" not in planner_statistics.stale_tables()  # 50 rows: not tenfold
    for n in range(50, 61):
        make_record(ctx, people, f"Person {n}")
    assert "records_record" in planner_statistics.stale_tables()  # 61 > 10 x 6


@pytest.mark.sqlite
def test_small_tables_are_left_unmeasured(ctx):
    people = make_collection(ctx, "people")
    make_record(ctx, people, "Ada")
    assert planner_statistics.refresh() == []


@pytest.mark.postgres
def test_postgresql_keeps_its_own_statistics(ctx, few_rows_count):
    people = make_collection(ctx, "people")
    for n in range(8):
        make_record(ctx, people, f"Person {n}")
    assert planner_statistics.refresh() == []
