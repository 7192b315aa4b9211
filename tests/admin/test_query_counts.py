"""Changelists cost the same number of queries for 5 rows as for 50: no per-row queries."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from records import services
from records.services import workspace_membership_add
from tests.conftest import make_collection, make_record


@pytest.fixture
def staff_client_in_local(ctx, django_user_model) -> Client:
    """A staff member of the tests' workspace: the admin scopes every list to it."""
    staff = django_user_model.objects.create_user(username="sam", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="records"))
    workspace_membership_add(user=staff, workspace_id=ctx.workspace_id)
    client = Client()
    client.force_login(staff)
    return client


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def _grow(ctx, rows: int) -> None:
    collection = make_collection(ctx, f"bulk{rows}")
    previous = None
    for index in range(rows):
        record = make_record(ctx, collection, f"Bulk {rows} {index}", n=index)
        if previous is not None:
            services.relationship_create(
                ctx=ctx, source_id=record.pk, relationship_type="after", target_id=previous.pk
            )
        previous = record


@pytest.mark.parametrize(
    "changelist",
    [
        "records_record",
        "records_auditevent",
        "records_relationship",
        "records_recordversion",
        "records_collection",
        "records_revisioncounter",
    ],
)
@pytest.mark.parametrize("who", ["admin_client_as_maya", "staff_client_in_local"])
def test_changelist_query_count_does_not_grow_with_rows(request, ctx, changelist, who):
    client = request.getfixturevalue(who)
    url = reverse(f"admin:{changelist}_changelist")
    _grow(ctx, 5)
    _queries(client, url)  # warm caches (content types, session)
    few = _queries(client, url)
    _grow(ctx, 45)
    many = _queries(client, url)
    assert many == few, f"{changelist} as {who}: {few} queries for few rows, {many} for many"


def test_record_page_query_count_does_not_grow_with_history_or_links(admin_client_as_maya, ctx):
    collection = make_collection(ctx, "hub")
    hub = make_record(ctx, collection, "Hub")
    url = reverse("admin:records_record_change", args=[hub.pk])

    def add_spokes(count: int) -> None:
        for index in range(count):
            spoke = make_record(ctx, collection, f"Spoke {index}")
            services.relationship_create(
                ctx=ctx, source_id=spoke.pk, relationship_type="part_of", target_id=hub.pk
            )

    add_spokes(2)
    _queries(admin_client_as_maya, url)
    few = _queries(admin_client_as_maya, url)
    add_spokes(6)
    many = _queries(admin_client_as_maya, url)
    assert many == few, f"record page: {few} queries with 2 links, {many} with 8"
