"""The approval page and queue say what a write would change in words a person can judge."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from records import services
from records.models import Record
from tests.admin.review_helpers import AGENT, gate, held_update
from workflow.actions import commit_import, commit_write, prepare_import, prepare_write
from workflow.models import PreparedAction
from workflow.resolution import resolve_record

QUEUE = "admin:workflow_preparedaction_changelist"


def page_of(client, action: PreparedAction) -> str:
    response = client.get(reverse("admin:workflow_preparedaction_change", args=[action.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def gated(hiring, ctx):
    gate(ctx, hiring.people)
    gate(ctx, hiring.applications)
    services.record_update(
        ctx=ctx,
        record_id=hiring.kirat.pk,
        changes={"stage": "onsite", "address": {"city": "Pune", "zip": "411001"}},
        expected_version=1,
    )
    return hiring


def test_an_update_shows_each_field_before_and_after_nested_too(admin_client_as_maya, gated):
    held = held_update(
        gated.kirat,
        {"stage": "offer", "address": {"city": "Delhi", "zip": "411001"}, "notes": "strong"},
        clarification="The user said Kirat moved to Delhi.",
    )
    page = page_of(admin_client_as_maya, held)
    kirat_url = reverse("admin:records_record_change", args=[gated.kirat.pk])
    assert f'<a href="{kirat_url}">Kirat</a>' in page
    assert "update Kirat: " in page and "stage onsite → offer" in page
    city = '<td>address.city</td>\n        <td class="old">Pune</td>\n        <td class="new">Delhi'
    assert city in page
    assert "address.zip" not in page  # unchanged nested keys are not noise
    assert "notes <span" in page and "(added)" in page
    assert "agent-reported clarification" in page and "moved to Delhi" in page
    assert "Prepared by <strong>local-agent</strong>" in page
    assert "The panel agreed." in page


def test_cited_evidence_and_link_endpoints_are_titles_with_links(admin_client_as_maya, gated):
    review = resolve_record(AGENT, query="Abhishek", collection_id=gated.people.pk)
    opening = resolve_record(AGENT, query="Senior Frontend", collection_id=gated.openings.pk)
    prepared = prepare_write(
        AGENT,
        operation="link_records",
        arguments={
            "source_id": gated.abhishek.pk,
            "relationship_type": "interested_in",
            "target_id": gated.frontend.pk,
        },
        review_ids=[review["resolution_id"], opening["resolution_id"]],
        decision_reason="He asked about the frontend role.",
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "awaiting_approval"
    held = PreparedAction.objects.get(pk=prepared["action_id"])
    page = page_of(admin_client_as_maya, held)
    abhishek = reverse("admin:records_record_change", args=[gated.abhishek.pk])
    frontend = reverse("admin:records_record_change", args=[gated.frontend.pk])
    assert f'<a href="{abhishek}">Abhishek</a>' in page
    assert f'<a href="{frontend}">Senior Frontend</a>' in page
    assert "interested_in" in page
    assert "“Senior Frontend”" in page  # what the agent looked up, in words
    assert "Selected:" in page
    evidence_part = page[page.index("What the agent looked at first") :]
    assert held.evidence[0]["review_id"] not in evidence_part.split("Stored JSON")[0]


def test_an_import_is_a_table_of_rows_with_flags_candidates_and_decisions(
    admin_client_as_maya, gated
):
    # Titles far apart from each other, so only the Kirat row is flagged.
    titles = [hashlib.sha256(str(i).encode()).hexdigest()[:14] for i in range(30)]
    rows = [{"key": f"r{i}", "title": t, "data": {"n": i}} for i, t in enumerate(titles)]
    rows.append({"key": "dup", "title": "Kirat", "data": {"source": "referral"}})
    prepared = prepare_import(
        AGENT, collection_id=gated.people.pk, rows=rows, decision_reason="Referral list."
    )
    decided = commit_import(
        AGENT, action_id=prepared["action_id"], decisions={"dup": {"decision": "skip"}}
    )
    assert decided["status"] == "awaiting_approval"
    held = PreparedAction.objects.get(pk=prepared["action_id"])
    page = page_of(admin_client_as_maya, held)
    table = page[
        page.index('id="import-rows"') : page.index("</table>", page.index('id="import-rows"'))
    ]
    assert table.count("<tr") == 1 + 31
    assert "possible duplicate of an existing record" in table
    kirat_url = reverse("admin:records_record_change", args=[gated.kirat.pk])
    assert f'<a href="{kirat_url}">Kirat</a>' in table
    assert "skip (not imported)" in table
    assert "import 31 rows into people, 1 flagged" in page
    queue = admin_client_as_maya.get(reverse(QUEUE)).content.decode()
    assert "import 31 rows into people" in queue


def test_the_queue_shows_a_one_line_summary(admin_client_as_maya, gated):
    held_update(gated.kirat, {"stage": "offer"})
    page = admin_client_as_maya.get(reverse(QUEUE), {"queue": "pending"}).content.decode()
    assert "update Kirat: stage onsite → offer" in page
    assert "awaiting your decision" in page


def test_the_queue_reads_none_of_the_stored_json(admin_client_as_maya, gated):
    held_update(gated.kirat, {"stage": "offer"})
    with CaptureQueriesContext(connection) as captured:
        assert admin_client_as_maya.get(reverse(QUEUE)).status_code == 200
    listing = [q["sql"] for q in captured if "workflow_preparedaction" in q["sql"]]
    assert listing
    for sql in listing:
        for column in ("preview", "evidence", "counters", "result"):
            assert f'"workflow_preparedaction"."{column}"' not in sql, sql


def test_the_queue_query_count_does_not_grow_with_actions(admin_client_as_maya, gated):
    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client_as_maya.get(reverse(QUEUE)).status_code == 200
        return len(captured)

    held_update(gated.kirat, {"stage": "offer"})
    count()
    few = count()
    for record in (gated.abhishek, gated.rahul_backend, gated.kirat_backend):
        held_update(record, {"stage": "next"}, clarification="The user means this one.")
    assert count() == few


def test_an_applied_write_shows_what_it_changed_and_who_approved(admin_client_as_maya, gated):
    held = held_update(gated.kirat, {"stage": "offer"})
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_approve", args=[held.pk]))
    page = page_of(admin_client_as_maya, held)
    assert "What it changed" in page and "approved by <strong>user:maya</strong>" in page
    assert '<td class="old">onsite</td>' in page and '<td class="new">offer</td>' in page
    assert Record.objects.get(pk=gated.kirat.pk).data["stage"] == "offer"
