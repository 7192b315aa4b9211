"""The benchmark's bulk path leaves the store exactly as record_create per row would.

Compared on a few records, field by field, apart from what must differ (IDs, times, the
collection): the record rows, names counters, stored versions, audit events and the full-text
rows. PostgreSQL's path bypasses the triggers and rebuilds their work in one pass, so this is
what shows it rebuilt all of it; SQLite's path keeps the triggers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from anchor_site.devtools.benchmarks import data
from records import services
from records.counters import ALL_NAMES, counter_values, names_key
from records.models import AuditEvent, Record, RecordVersion
from records.selectors.active_counts import active_counts

ROWS = [
    data.BulkRecord("Kirat Singh", {"status": "open", "amount": 120, "notes": "Café résumé"}),
    data.BulkRecord("Priya Rao", {"status": "done", "nested": {"level": 2.5, "tags": ["a"]}}),
    data.BulkRecord("Abhishek Nair", {}),
]


def _records(collection_id: str) -> list[tuple[Any, ...]]:
    return sorted(
        Record.objects.filter(collection_id=collection_id).values_list(
            "title", "data", "version", "created_by", "archived_at"
        )
    )


def _versions(collection_id: str) -> list[tuple[Any, ...]]:
    return sorted(
        (v.record.title, v.version, v.title, json.dumps(v.data), v.aliases, v.archived_at)
        + (v.actor_id, v.recorded_at == v.record.created_at)
        for v in RecordVersion.objects.filter(record__collection_id=collection_id).select_related(
            "record"
        )
    )


def _events(collection_id: str) -> list[tuple[Any, ...]]:
    found = []
    for event in AuditEvent.objects.filter(collection_id=collection_id, entity_type="record"):
        after = dict(event.after or {}, collection_id="<the collection>")
        found.append(
            (event.kind, event.entity_id == event.record_id, event.before, json.dumps(after))
            + (event.actor_id, event.decision_reason, event.agent_reported_clarification)
            + (event.review_evidence, event.action_id, event.item_index)
        )
    return sorted(found)


def _search_rows(collection_id: str) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT r.title, s.document::text FROM records_record r "
                "JOIN records_record_search s ON s.record_id = r.id WHERE r.collection_id = %s",
                [collection_id],
            )
        else:
            cursor.execute(
                "SELECT r.title, f.title, f.body FROM records_record r "
                "JOIN records_record_fts_key k ON k.record_id = r.id "
                "JOIN records_record_fts f ON f.rowid = k.id WHERE r.collection_id = %s",
                [collection_id],
            )
        return sorted(cursor.fetchall())


def _counters(collection_id: str) -> int:
    return counter_values(data.WORKSPACE, [names_key(collection_id)])[names_key(collection_id)]


def _all_names() -> int:
    return counter_values(data.WORKSPACE, [ALL_NAMES])[ALL_NAMES]


@pytest.mark.django_db(transaction=True)
def test_bulk_records_are_what_record_create_leaves():
    ctx = data.context()
    by_service = data.collection(ctx, "by service")
    by_bulk = data.collection(ctx, "by bulk")

    before = _all_names()
    for row in ROWS:
        services.record_create(ctx=ctx, collection_id=by_service.pk, title=row.title, data=row.data)
    after_services = _all_names()
    assert data.bulk_insert(by_bulk.pk, iter(ROWS)) == len(ROWS)

    assert _records(by_bulk.pk) == _records(by_service.pk)
    assert _counters(by_bulk.pk) == _counters(by_service.pk) == len(ROWS)
    assert active_counts(data.WORKSPACE, [by_bulk.pk, by_service.pk]) == {
        by_bulk.pk: len(ROWS),
        by_service.pk: len(ROWS),
    }
    assert _all_names() - after_services == after_services - before == len(ROWS)
    assert _versions(by_bulk.pk) == _versions(by_service.pk)
    assert len(_versions(by_bulk.pk)) == len(ROWS)
    assert _events(by_bulk.pk) == _events(by_service.pk)
    assert len(_events(by_bulk.pk)) == len(ROWS)
    assert _search_rows(by_bulk.pk) == _search_rows(by_service.pk)
    assert len(_search_rows(by_bulk.pk)) == len(ROWS)


@pytest.mark.django_db(transaction=True)
def test_the_triggers_work_again_after_a_bulk_load():
    ctx = data.context()
    loaded = data.collection(ctx, "loaded")
    data.bulk_insert(loaded.pk, iter(ROWS))

    services.record_create(ctx=ctx, collection_id=loaded.pk, title="Later One", data={"x": 1})

    assert _counters(loaded.pk) == len(ROWS) + 1
    assert active_counts(data.WORKSPACE, [loaded.pk]) == {loaded.pk: len(ROWS) + 1}
    assert [row[0] for row in _search_rows(loaded.pk)].count("Later One") == 1


@pytest.mark.django_db(transaction=True)
def test_a_second_load_into_the_same_collection_adds_only_its_own_rows():
    ctx = data.context()
    loaded = data.collection(ctx, "loaded twice")
    data.bulk_insert(loaded.pk, iter(ROWS))
    data.bulk_insert(loaded.pk, iter(ROWS[:1]))

    assert _counters(loaded.pk) == len(ROWS) + 1
    assert active_counts(data.WORKSPACE, [loaded.pk]) == {loaded.pk: len(ROWS) + 1}
    assert len(_versions(loaded.pk)) == len(_events(loaded.pk)) == len(ROWS) + 1
    assert len(_search_rows(loaded.pk)) == len(ROWS) + 1
