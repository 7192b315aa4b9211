"""Many records and links at once leave exactly what one at a time leaves, in fewer statements.

Each row is written twice, once by the single service into one collection and once by the bulk
service into a twin collection, and everything stored is compared: the records, their first
versions, the audit events (each with its own context) and their order, the revision counters
the triggers move, and the search index.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from records import selectors, services
from records.counters import counter_values, links_key, names_key
from records.errors import AnchorError
from records.models import AuditEvent, Record, RecordVersion, Relationship
from records.services import NewLink, NewRecord, WriteContext
from tests.conftest import ACTOR, WORKSPACE, make_collection

ROWS = [
    ("Priya Raman", {"stage": "screen", "years": 4}),
    ("Rohan Mehta", {}),
    ("Zoë Quillfeather", {"notes": "prefers async", "tags": ["remote"]}),
]
LINKS = [(0, "mentors", 1), (1, "works_with", 2), (2, "mentors", 0)]


def row_ctx(index: int) -> WriteContext:
    return WriteContext(
        workspace_id=WORKSPACE,
        actor_id=ACTOR,
        decision_reason="pasted list",
        clarification="the user listed them" if index == 1 else "",
        review_evidence=[{"import_row": str(index), "status": "clean"}],
        action_id="action-1",
        item_index=index,
    )


def stored_record(record: Record) -> tuple:
    version = RecordVersion.objects.get(record=record)
    return (
        record.title,
        record.data,
        record.version,
        record.created_by,
        record.archived_at,
        (version.version, version.title, version.data, version.aliases, version.actor_id),
    )


def stored_events(entity_ids: list[str], collection_id: str) -> list[tuple]:
    events = AuditEvent.objects.filter(entity_id__in=entity_ids).order_by("id")
    shown = []
    for event in events:
        after = dict(event.after or {})
        for key in ("collection_id", "relationship_id", "source_id", "target_id"):
            after.pop(key, None)
        shown.append(
            (
                event.kind,
                event.entity_type,
                entity_ids.index(event.entity_id),
                event.actor_id,
                event.before,
                after,
                event.collection_id == collection_id,
                event.decision_reason,
                event.agent_reported_clarification,
                event.review_evidence,
                event.action_id,
                event.item_index,
            )
        )
    return shown


@pytest.fixture
def twins(ctx):
    return make_collection(ctx, "one by one"), make_collection(ctx, "all at once")


def test_many_records_and_links_are_stored_as_one_at_a_time_stores_them(ctx, twins):
    single, many = twins
    names_before = counter_values(WORKSPACE, [names_key(single.pk), names_key(many.pk)])
    one_by_one = [
        services.record_create(ctx=row_ctx(i), collection_id=single.pk, title=t, data=d)
        for i, (t, d) in enumerate(ROWS)
    ]
    at_once = services.record_create_many(
        collection_id=many.pk, rows=[NewRecord(row_ctx(i), t, d) for i, (t, d) in enumerate(ROWS)]
    )
    assert [stored_record(r) for r in at_once] == [stored_record(r) for r in one_by_one]
    assert [r.collection_id for r in Record.objects.filter(pk__in=[r.pk for r in at_once])] == [
        many.pk
    ] * len(ROWS)
    assert stored_events([r.pk for r in at_once], many.pk) == stored_events(
        [r.pk for r in one_by_one], single.pk
    )
    names_after = counter_values(WORKSPACE, [names_key(single.pk), names_key(many.pk)])
    assert (
        names_after[names_key(many.pk)] - names_before[names_key(many.pk)]
        == names_after[names_key(single.pk)] - names_before[names_key(single.pk)]
        > 0
    )
    found = selectors.search_records(workspace_id=WORKSPACE, text="Quillfeather")
    assert {r["collection_id"] for r in found["records"]} == {single.pk, many.pk}

    singly = [
        services.relationship_create(
            ctx=row_ctx(i),
            source_id=one_by_one[s].pk,
            relationship_type=kind,
            target_id=one_by_one[t].pk,
        )[0]
        for i, (s, kind, t) in enumerate(LINKS)
    ]
    together = services.relationship_create_many(
        [NewLink(row_ctx(i), at_once[s], kind, at_once[t]) for i, (s, kind, t) in enumerate(LINKS)]
    )

    def shape(rels, records):
        ids = [r.pk for r in records]
        # In the items' order, read back from the database (links made at once share a time).
        stored = Relationship.objects.in_bulk([r.pk for r in rels])
        return [
            (ids.index(r.source_id), r.relationship_type, ids.index(r.target_id), r.created_by)
            for r in (stored[rel.pk] for rel in rels)
        ]

    assert shape(together, at_once) == shape(singly, one_by_one)
    assert stored_events([r.pk for r in together], many.pk) == stored_events(
        [r.pk for r in singly], single.pk
    )
    link_counters = counter_values(WORKSPACE, [links_key(r.pk) for r in [*one_by_one, *at_once]])
    assert [link_counters[links_key(r.pk)] for r in at_once] == [
        link_counters[links_key(r.pk)] for r in one_by_one
    ]


def test_links_the_single_service_must_answer_are_not_taken_in_bulk(ctx, twins):
    _, many = twins
    a, b = services.record_create_many(
        collection_id=many.pk, rows=[NewRecord(row_ctx(0), "A", {}), NewRecord(row_ctx(1), "B", {})]
    )
    assert services.can_link_many([NewLink(ctx, a, "knows", b), NewLink(ctx, b, "knows", a)])
    assert not services.can_link_many([NewLink(ctx, a, "knows", a)])
    assert not services.can_link_many([NewLink(ctx, a, "knows", b), NewLink(ctx, a, "knows", b)])
    with pytest.raises(ValueError):
        services.relationship_create_many([NewLink(ctx, a, "knows", a)])


def test_a_bad_row_writes_nothing(ctx, twins):
    _, many = twins
    before = Record.objects.count(), AuditEvent.objects.count()
    with pytest.raises(AnchorError) as refused:
        services.record_create_many(
            collection_id=many.pk,
            rows=[NewRecord(row_ctx(0), "Fine", {}), NewRecord(row_ctx(1), "", {})],
        )
    assert refused.value.code == "INVALID_INPUT" and "title" in refused.value.message
    assert (Record.objects.count(), AuditEvent.objects.count()) == before


def test_the_statements_do_not_grow_with_the_rows(ctx, twins):
    _, many = twins

    def statements(count: int) -> int:
        rows = [NewRecord(row_ctx(i), f"Row {count}-{i}", {"n": i}) for i in range(count)]
        with CaptureQueriesContext(connection) as captured:
            made = services.record_create_many(collection_id=many.pk, rows=rows)
            services.relationship_create_many(
                [NewLink(ctx, made[i], "next", made[(i + 1) % count]) for i in range(count)]
            )
        return len(captured)

    assert statements(40) == statements(3)
