"""Several rows by ID: the workspace's own only, and found by primary key, so the cost does not
grow with the workspace (SQLite without statistics would walk the workspace's index)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records import approval
from records.approval import Touched
from records.models import Record, Relationship
from records.selectors import values_by_id
from tests.conftest import link, make_collection, make_record


def plans(queries: list[dict]) -> list[str]:
    with connection.cursor() as cursor:
        found = []
        for query in queries:
            cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
            found.append(" ".join(str(row[-1]) for row in cursor.fetchall()))
        return found


def test_only_the_workspaces_own_rows_are_found(ctx, other_ctx):
    mine = make_record(ctx, make_collection(ctx, "people"), "Ada")
    theirs = make_record(other_ctx, make_collection(other_ctx, "people"), "Ada")
    found = values_by_id(
        Record.objects,
        workspace_id=ctx.workspace_id,
        ids=[mine.pk, theirs.pk, "00000000-0000-4000-8000-000000000000"],
        fields=["id", "title"],
    )
    assert found == [{"id": mine.pk, "title": "Ada"}]
    assert values_by_id(Record.objects, workspace_id=ctx.workspace_id, ids=[], fields=["id"]) == []


def test_the_collections_a_write_touches_are_its_workspaces_only(ctx, other_ctx):
    people, teams = make_collection(ctx, "people"), make_collection(ctx, "teams")
    ada, core = make_record(ctx, people, "Ada"), make_record(ctx, teams, "Core")
    rel = link(ctx, ada, "member of", core)
    theirs = make_collection(other_ctx, "secret")
    their_record = make_record(other_ctx, theirs, "Hidden")
    touched = Touched(
        record_ids=frozenset({ada.pk, their_record.pk}), relationship_ids=frozenset({rel.pk})
    )
    assert approval.collections_touched(ctx.workspace_id, touched) == sorted([people.pk, teams.pk])
    assert approval.collections_touched(other_ctx.workspace_id, touched) == [theirs.pk]


@pytest.mark.sqlite  # the planner's choice without statistics is SQLite's
def test_the_rows_are_looked_up_by_primary_key_not_by_the_workspace(ctx):
    people = make_collection(ctx, "people")
    records = [make_record(ctx, people, f"Person {n}") for n in range(3)]
    ids = [r.pk for r in records]
    rel = link(ctx, records[0], "knows", records[1])
    with CaptureQueriesContext(connection) as old_shape:
        list(Record.objects.filter(workspace_id=ctx.workspace_id, pk__in=ids).values("id"))
    assert "(workspace_id=?)" in plans(old_shape.captured_queries)[0]  # what this avoids

    with CaptureQueriesContext(connection) as looked_up:
        approval.collections_touched(
            ctx.workspace_id,
            Touched(record_ids=frozenset(ids), relationship_ids=frozenset({rel.pk})),
        )
    found = plans(looked_up.captured_queries)
    assert len(found) == 2, found
    for plan in found:
        assert "(id=?)" in plan and "workspace_id=?" not in plan, plan
    assert Relationship.objects.count() == 1
