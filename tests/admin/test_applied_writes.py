"""An applied write's page names what it made: each new record, link and alias by title, linked
to its page; an import's links name their row ends; a flagged row shows the agent's account."""

from __future__ import annotations

from django.urls import reverse

from records.models import Record
from tests.admin.review_helpers import gate, held_update
from tests.admin.review_imports import DIFFERENT_PERSON, agent_create, referral_import
from workflow.models import ActionState, PreparedAction


def page_of(client, action_id: str) -> str:
    response = client.get(reverse("admin:workflow_preparedaction_change", args=[action_id]))
    assert response.status_code == 200
    return response.content.decode()


def record_link(record: Record) -> str:
    url = reverse("admin:records_record_change", args=[record.pk])
    return f'<a href="{url}">{record.title}</a>'


def test_an_agent_create_applied_at_once_names_the_new_record(admin_client_as_maya, hiring):
    committed = agent_create(hiring.people.pk, "Priya Nair", email="priya@example.com")
    assert committed["status"] == "committed"
    priya = Record.objects.get(title="Priya Nair")
    page = page_of(admin_client_as_maya, committed["action_id"])
    assert "no such record now" not in page
    assert record_link(priya) in page[page.index("What it changed") :]


def test_an_approved_create_names_the_new_record(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = agent_create(hiring.people.pk, "Priya Nair")
    assert held["status"] == "awaiting_approval"
    admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_approve", args=[held["action_id"]])
    )
    page = page_of(admin_client_as_maya, held["action_id"])
    assert "no such record now" not in page
    assert record_link(Record.objects.get(title="Priya Nair")) in page


def test_a_pending_import_names_its_link_rows_by_title(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = referral_import(hiring)
    assert held.state == ActionState.AWAITING_APPROVAL
    page = page_of(admin_client_as_maya, held.pk)
    links = page[page.index('id="import-links"') : page.index("</ul>", page.index("import-links"))]
    assert "None" not in links
    assert "Abhishek" in links and "(row r1)" in links and "Meera Iyer" in links
    assert record_link(hiring.backend) in links


def test_an_approved_import_links_every_row_and_link_to_what_it_made(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    held = referral_import(hiring)
    admin_client_as_maya.post(reverse("admin:workflow_preparedaction_approve", args=[held.pk]))
    assert PreparedAction.objects.get(pk=held.pk).state == ActionState.COMMITTED
    page = page_of(admin_client_as_maya, held.pk)
    assert "no such record now" not in page and "None —" not in page
    result = PreparedAction.objects.get(pk=held.pk).result
    assert result is not None
    outcome = result["rows"]
    made = [Record.objects.get(pk=outcome[key]["record_id"]) for key in ("r1", "r2", "r3")]
    assert made[0].pk != hiring.abhishek.pk
    rows = page[page.index('id="import-rows"') : page.index("</table>", page.index("import-rows"))]
    for record in made:
        assert record_link(record) in rows
    links = page[page.index('id="import-links"') : page.index("</ul>", page.index("import-links"))]
    assert "Links it made" in page
    assert record_link(made[0]) in links and record_link(made[1]) in links
    assert record_link(made[2]) in links and record_link(hiring.backend) in links


def test_a_flagged_row_shows_the_agents_reason_inline(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held = referral_import(hiring)
    page = page_of(admin_client_as_maya, held.pk)
    row = page[page.index('id="row-r1"') : page.index("</tr>", page.index('id="row-r1"'))]
    assert "possible duplicate" in row and record_link(hiring.abhishek) in row
    assert "create anyway" in row
    assert "agent-reported" in row and DIFFERENT_PERSON in row
    clean = page[page.index('id="row-r2"') : page.index("</tr>", page.index('id="row-r2"'))]
    assert "agent-reported" not in clean


def test_a_held_write_flags_another_pending_write_on_the_same_field(
    admin_client_as_maya, hiring, ctx
):
    gate(ctx, hiring.people)
    stage = held_update(hiring.kirat, {"stage": "offer"})
    also_stage = held_update(hiring.kirat, {"stage": "rejected", "city": "Pune"})
    email = held_update(hiring.kirat, {"email": "kirat@new.example.com"})
    elsewhere = held_update(hiring.abhishek, {"stage": "onsite"})
    page = page_of(admin_client_as_maya, stage.pk)
    overlaps = page[page.index('id="overlaps"') : page.index("</ul>", page.index('id="overlaps"'))]
    also_url = reverse("admin:workflow_preparedaction_change", args=[also_stage.pk])
    email_url = reverse("admin:workflow_preparedaction_change", args=[email.pk])
    also = overlaps[overlaps.index(also_url) :].split("</li>")[0]
    assert "same field" in also and "Kirat: stage" in also
    other = overlaps[overlaps.index(email_url) :].split("</li>")[0]
    assert "same record" in other and "same field" not in other
    assert "Abhishek" not in overlaps
    assert 'id="overlaps"' not in page_of(admin_client_as_maya, elsewhere.pk)


def test_a_decided_write_flags_no_overlaps(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    stage = held_update(hiring.kirat, {"stage": "offer"})
    held_update(hiring.kirat, {"email": "kirat@new.example.com"})
    admin_client_as_maya.post(
        reverse("admin:workflow_preparedaction_reject", args=[stage.pk]), {"reason": "Not yet."}
    )
    assert 'id="overlaps"' not in page_of(admin_client_as_maya, stage.pk)
