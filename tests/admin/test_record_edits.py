"""A person's edits in the admin are first-class writes: through the services, version-checked,
audited with the signed-in user, and moving the counters that make agents' reviews stale."""

from __future__ import annotations

import pytest
from django.urls import reverse

from records import services
from records.errors import AnchorError
from records.models import AuditEvent, Record, RecordAlias, Relationship, RevisionCounter
from records.services import WriteContext
from tests.admin.forms import page_post_data

USER = "user:maya"


def change_url(record: Record) -> str:
    return reverse("admin:records_record_change", args=[record.pk])


def counter(record: Record, key: str) -> int:
    row = RevisionCounter.objects.filter(workspace_id=record.workspace_id, key=key).first()
    return row.value if row else 0


def open_record(client, record: Record) -> dict:
    page = client.get(change_url(record), {"edit": "1"})  # reading first; editing is chosen
    assert page.status_code == 200
    return page_post_data(page)


def agent_update(ctx: WriteContext, record: Record, **changes) -> Record:
    record.refresh_from_db()
    return services.record_update(
        ctx=ctx, record_id=record.pk, changes=changes, expected_version=record.version
    )


def test_edit_is_audited_with_the_user_and_bumps_version_and_counters(admin_client_as_maya, hiring):
    kirat = hiring.kirat
    names_before = counter(kirat, f"names:{kirat.collection_id}")
    form = open_record(admin_client_as_maya, kirat)
    form.update(
        title="Kirat Singh",
        data='{"email": "kirat@example.com", "city": "Pune"}',
        change_reason="Full name from his CV",
    )

    response = admin_client_as_maya.post(change_url(kirat), form)

    assert response.status_code == 302, response.content.decode()[:2000]
    kirat.refresh_from_db()
    assert (kirat.title, kirat.data["city"], kirat.version) == ("Kirat Singh", "Pune", 3)
    events = AuditEvent.objects.filter(record_id=kirat.pk, actor_id=USER).order_by("id")
    assert [e.kind for e in events] == ["record.renamed", "record.updated"]
    assert {e.decision_reason for e in events} == {"Full name from his CV"}
    assert (events[1].before or {})["data"] == {"email": "kirat@example.com"}
    assert list(kirat.versions.order_by("version").values_list("actor_id", flat=True)) == [
        "local-agent",
        USER,
        USER,
    ]
    assert counter(kirat, f"names:{kirat.collection_id}") > names_before


def test_stale_form_is_refused_and_nothing_is_overwritten(admin_client_as_maya, hiring, ctx):
    kirat = hiring.kirat
    form = open_record(admin_client_as_maya, kirat)
    agent_update(ctx, kirat, email="kirat@new.example.com")  # lands while the page is open
    form.update(title="Kirat Singh", data='{"email": "kirat@example.com"}')

    response = admin_client_as_maya.post(change_url(kirat), form)

    assert response.status_code == 200
    assert "changed since you opened it" in response.content.decode()
    assert "Nothing was saved" in response.content.decode()
    kirat.refresh_from_db()
    assert (kirat.title, kirat.data, kirat.version) == (
        "Kirat",
        {"email": "kirat@new.example.com"},
        2,
    )
    assert not AuditEvent.objects.filter(actor_id=USER).exists()


def test_a_write_landing_after_the_form_check_rolls_the_whole_save_back(
    admin_client_as_maya, hiring, ctx, monkeypatch
):
    """The form's pre-check can pass and the locked re-check at save still refuse; then no
    part of the save (not even an earlier alias change) survives."""
    kirat = hiring.kirat
    form = open_record(admin_client_as_maya, kirat)
    agent_update(ctx, kirat, email="kirat@new.example.com")
    monkeypatch.setattr("records.admin.record_admin.stale_message", lambda *args: None)
    form.update(title="Kirat Singh", **{"aliases-0-alias": "KS"})

    response = admin_client_as_maya.post(change_url(kirat), form, follow=True)

    messages = [str(m) for m in response.context["messages"]]
    assert any("Nothing was saved" in m and "version 2" in m for m in messages), messages
    kirat.refresh_from_db()
    assert (kirat.title, kirat.version) == ("Kirat", 2)
    assert not RecordAlias.objects.filter(record=kirat).exists()
    assert not AuditEvent.objects.filter(actor_id=USER).exists()


def test_stale_links_are_refused(admin_client_as_maya, hiring, ctx):
    form = open_record(admin_client_as_maya, hiring.kirat_backend)
    services.relationship_create(
        ctx=ctx,
        source_id=hiring.kirat_backend.pk,
        relationship_type="referred_by",
        target_id=hiring.abhishek.pk,
    )
    form["outgoing-0-DELETE"] = "on"
    response = admin_client_as_maya.post(change_url(hiring.kirat_backend), form)
    assert response.status_code == 200
    assert "links of" in response.content.decode()
    assert Relationship.objects.filter(source=hiring.kirat_backend).count() == 3


def test_admin_edit_makes_an_agents_resolution_stale(admin_client_as_maya, hiring):
    from workflow.freshness import check_fresh
    from workflow.resolution import resolve_record
    from workflow.scope import Scope
    from workflow.tickets import load_tickets

    scope = Scope("local", "local-agent")
    answer = resolve_record(scope, query="Kirat")
    form = open_record(admin_client_as_maya, hiring.kirat)
    form["title"] = "Kirat Singh"
    assert admin_client_as_maya.post(change_url(hiring.kirat), form).status_code == 302

    tickets = load_tickets(scope, [answer["resolution_id"]])
    with pytest.raises(AnchorError, match="stale"):
        check_fresh(tickets)


def test_aliases_are_added_and_removed_through_the_services(admin_client_as_maya, hiring):
    kirat = hiring.kirat
    form = open_record(admin_client_as_maya, kirat)
    form["aliases-0-alias"] = "Kirat S."
    assert admin_client_as_maya.post(change_url(kirat), form).status_code == 302
    kirat.refresh_from_db()
    assert list(kirat.aliases.values_list("alias", flat=True)) == ["Kirat S."]
    assert kirat.version == 2

    form = open_record(admin_client_as_maya, kirat)
    form["aliases-0-DELETE"] = "on"
    assert admin_client_as_maya.post(change_url(kirat), form).status_code == 302
    kirat.refresh_from_db()
    assert not kirat.aliases.exists()
    kinds = AuditEvent.objects.filter(record_id=kirat.pk, actor_id=USER).values_list("kind")
    assert sorted(k for (k,) in kinds) == ["record.alias_added", "record.alias_removed"]


def test_links_are_added_and_removed_through_the_services(admin_client_as_maya, hiring):
    interview = hiring.coding_interview
    form = open_record(admin_client_as_maya, interview)
    # The "links from this record" inline: its one existing row, then one blank row.
    assert form["outgoing-0-relationship_type"] == "for_application"
    form["outgoing-1-relationship_type"] = "interviewer"
    form["outgoing-1-target"] = hiring.rahul_backend.pk
    assert admin_client_as_maya.post(change_url(interview), form).status_code == 302
    assert Relationship.objects.filter(
        source=interview, relationship_type="interviewer", target=hiring.rahul_backend
    ).exists()

    form = open_record(admin_client_as_maya, interview)
    form["outgoing-0-DELETE"] = "on"
    assert admin_client_as_maya.post(change_url(interview), form).status_code == 302
    assert not Relationship.objects.filter(source=interview, relationship_type="for_application")
    kinds = AuditEvent.objects.filter(record_id=interview.pk, actor_id=USER).values_list("kind")
    assert sorted(k for (k,) in kinds) == ["relationship.created", "relationship.deleted"]


def test_create_record_through_the_service(admin_client_as_maya, hiring):
    response = admin_client_as_maya.post(
        reverse("admin:records_record_add"),
        {
            "collection": hiring.people.pk,
            "title": "Priya",
            "data": '{"role": "interviewer"}',
            "change_reason": "New interviewer",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    priya = Record.objects.get(title="Priya")
    assert (priya.version, priya.data, priya.created_by) == (1, {"role": "interviewer"}, USER)
    event = AuditEvent.objects.get(record_id=priya.pk)
    assert (event.kind, event.decision_reason) == ("record.created", "New interviewer")


def test_removing_a_data_key_is_refused_with_the_reason(admin_client_as_maya, hiring):
    form = open_record(admin_client_as_maya, hiring.kirat)
    form["data"] = "{}"
    response = admin_client_as_maya.post(change_url(hiring.kirat), form)
    assert response.status_code == 200
    assert "Keys cannot be removed: email" in response.content.decode()


def test_a_persons_edit_goes_through_the_approval_policy(hiring, ctx, monkeypatch):
    """The admin is a door like any other: it asks records.approval, as a person (applies)."""
    from records import approval
    from records.admin.record_writes import links_revision, record_edit_apply

    services.collection_set_requires_approval(
        ctx=ctx, collection_id=hiring.people.pk, requires_approval=True
    )
    asked: list[tuple[list[str], str]] = []
    real = approval.decide

    def spy(workspace_id: str, ids: list[str], *, actor: str) -> approval.Decision:
        asked.append((list(ids), actor))
        return real(workspace_id, ids, actor=actor)

    monkeypatch.setattr(approval, "decide", spy)
    person = WriteContext(workspace_id=ctx.workspace_id, actor_id="user:maya", decision_reason="r")
    record = record_edit_apply(
        ctx=person,
        record_id=hiring.kirat.pk,
        loaded_version=hiring.kirat.version,
        loaded_links=links_revision(hiring.kirat),
        title="Kirat",
        data={**hiring.kirat.data, "stage": "offer"},
    )
    assert asked == [([hiring.people.pk], approval.PERSON)]
    assert record.data["stage"] == "offer"  # gated, but a person's edit is the approval
