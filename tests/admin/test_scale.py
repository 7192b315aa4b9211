"""Pages that hold at scale: a record with 3,000 incoming links among 10,000 records opens small
and saves correctly, and the approval queue lists 1,000 actions without reading their JSON.

The figures (time, bytes) are printed for the record, not asserted: timing depends on the
machine. What is asserted is what makes them small: bounded page size, a bounded number of form
fields, a save that works, and no stored JSON in the list query.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from anchor_site.devtools.benchmarks import data as bench
from records.models import Record, Relationship
from tests.admin.forms import page_post_data
from workflow.models import ActionState, PreparedAction

RECORDS = 10_000
INCOMING = 3_000
ACTIONS = 1_000

pytestmark = pytest.mark.slow


def timed(client, method: str, url: str, data=None) -> tuple[float, Any]:
    started = time.perf_counter()
    response = (
        getattr(client, method)(url, data) if data is not None else getattr(client, method)(url)
    )
    return time.perf_counter() - started, response


@pytest.fixture
def hub(db):
    ctx = bench.context()
    people = bench.collection(ctx, "people")
    bench.bulk_insert(people.pk, bench.people(bench.person_names(RECORDS)))
    hub = Record.objects.filter(workspace_id=bench.WORKSPACE).order_by("created_at").first()
    assert hub is not None
    sources = Record.objects.filter(workspace_id=bench.WORKSPACE).exclude(pk=hub.pk)
    now = timezone.now()
    Relationship.objects.bulk_create(
        [
            Relationship(
                workspace_id=bench.WORKSPACE,
                source_id=source_id,
                relationship_type="reports_to",
                target_id=hub.pk,
                created_by=bench.ACTOR,
                created_at=now,
            )
            for source_id in sources.values_list("pk", flat=True)[:INCOMING]
        ],
        batch_size=500,
    )
    return hub


def test_a_record_with_3000_incoming_links_opens_small_and_saves(admin_client_as_maya, hub):
    url = reverse("admin:records_record_change", args=[hub.pk])
    timed(admin_client_as_maya, "get", url)  # warm caches
    read_s, read = timed(admin_client_as_maya, "get", url)
    edit_s, edit = timed(admin_client_as_maya, "get", url + "?edit=1")
    assert read.status_code == edit.status_code == 200
    fields = page_post_data(edit)
    fields.update(title=f"{hub.title} (lead)", change_reason="Leads the team now")
    save_s, saved = timed(admin_client_as_maya, "post", url + "?edit=1", fields)

    print(
        f"\nrecord page with {INCOMING} incoming links among {RECORDS} records: "
        f"read {read_s * 1000:.0f} ms, {len(read.content) / 1024:.0f} KiB; "
        f"edit form {edit_s * 1000:.0f} ms, {len(edit.content) / 1024:.0f} KiB, "
        f"{len(fields)} form fields; save {save_s * 1000:.0f} ms -> {saved.status_code}"
    )
    assert len(read.content) < 300_000 and len(edit.content) < 300_000
    assert len(fields) < 1_000  # Django's DATA_UPLOAD_MAX_NUMBER_FIELDS
    assert saved.status_code == 302
    hub.refresh_from_db()
    assert hub.title.endswith("(lead)")
    assert Relationship.objects.filter(target=hub).count() == INCOMING


def test_the_queue_lists_1000_actions_without_their_json(admin_client_as_maya, hub):
    now = timezone.now()
    rows = [{"key": f"r{i}", "title": f"Row {i}", "data": {"notes": "x" * 100}} for i in range(100)]
    PreparedAction.objects.bulk_create(
        [
            PreparedAction(
                workspace_id=bench.WORKSPACE,
                actor_id=bench.ACTOR,
                operation="import" if i % 2 else "update_record",
                arguments={"collection_id": hub.collection_id, "rows": rows, "reviewed": rows}
                if i % 2
                else {"record_id": hub.pk, "changes": {"stage": "offer"}, "expected_version": 1},
                decision_reason=f"Reason {i}",
                preview={"rows": rows},
                evidence=[{"review_id": str(i), "request": {"query": "x" * 2000}}],
                state=ActionState.AWAITING_APPROVAL if i % 3 else ActionState.COMMITTED,
                created_at=now - timedelta(seconds=i),
                expires_at=now,
            )
            for i in range(ACTIONS)
        ],
        batch_size=200,
    )
    url = reverse("admin:workflow_preparedaction_changelist")
    timed(admin_client_as_maya, "get", url)
    with CaptureQueriesContext(connection) as captured:
        list_s, listed = timed(admin_client_as_maya, "get", url)
    assert listed.status_code == 200
    print(
        f"\napproval queue with {ACTIONS} actions: {list_s * 1000:.0f} ms, "
        f"{len(listed.content) / 1024:.0f} KiB, {len(captured)} queries"
    )
    assert "import 100 rows into people" in listed.content.decode()
    for query in captured:
        assert '"workflow_preparedaction"."preview"' not in query["sql"]
