"""A collection's history reads its own events only, however many its records have.

Every record event carries its collection's ID too, so a read by collection_id walks all of
them, newest first, to find the few about the collection itself. The history is read by entity
instead (audit_entity): one range in index order, as flat as a record's history.
"""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from records import selectors, services
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.records.test_aggregate_plans import plan


def test_collection_history_reads_the_collection_events_by_index_in_order(ctx):
    people = make_collection(ctx, "people")
    for index in range(60):
        make_record(ctx, people, f"Person {index}")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="persons")
    if connection.vendor == "postgresql":
        # Statistics of this table as it is, not as an earlier test left it (a near-empty
        # table's, for which any index costs the same and the planner may take another).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE records_auditevent")
    with CaptureQueriesContext(connection) as queries:
        result = selectors.collection_history(workspace_id=WORKSPACE, collection_id=people.pk)
    assert [event["kind"] for event in result["events"]] == [
        "collection.alias_added",
        "collection.created",
    ]
    statement = next(q["sql"] for q in queries.captured_queries if "records_auditevent" in q["sql"])
    text = "\n".join(plan(statement))
    assert "audit_entity" in text, text
    assert "audit_collection" not in text, text
    assert "Seq Scan" not in text and "SCAN records_auditevent" not in text, text
    if connection.vendor == "sqlite":
        # Newest first straight from the index. PostgreSQL may still choose a bitmap scan and
        # sort the few rows it returns, depending on the statistics earlier tests left.
        assert "TEMP B-TREE" not in text, text
