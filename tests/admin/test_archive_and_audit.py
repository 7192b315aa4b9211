"""Archiving goes through the service at the version the person saw; the audit is read-only;
nothing in the store can be deleted from the admin except a link, through its service."""

from __future__ import annotations

from django.urls import reverse

from records import services
from records.models import AuditEvent, Record, Relationship

USER = "user:maya"


def archive_url(record: Record) -> str:
    return reverse("admin:records_record_archive", args=[record.pk])


def test_archive_button_confirms_then_archives_through_the_service(admin_client_as_maya, hiring):
    kirat = hiring.kirat
    confirm = admin_client_as_maya.get(archive_url(kirat), {"version": kirat.version})
    assert confirm.status_code == 200
    assert "There is no unarchive" in confirm.content.decode()

    done = admin_client_as_maya.post(
        archive_url(kirat), {"version": kirat.version, "reason": "Withdrew his application"}
    )

    assert done.status_code == 302
    kirat.refresh_from_db()
    assert kirat.archived_at is not None and kirat.version == 2
    event = AuditEvent.objects.get(record_id=kirat.pk, kind="record.archived")
    assert (event.actor_id, event.decision_reason) == (USER, "Withdrew his application")


def test_archive_at_a_stale_version_is_refused(admin_client_as_maya, hiring, ctx):
    kirat = hiring.kirat
    services.record_update(ctx=ctx, record_id=kirat.pk, changes={"x": 1}, expected_version=1)

    response = admin_client_as_maya.post(archive_url(kirat), {"version": 1}, follow=True)

    messages = [str(m) for m in response.context["messages"]]
    assert any("Nothing was saved" in m and "version 2" in m for m in messages), messages
    kirat.refresh_from_db()
    assert kirat.archived_at is None


def test_archive_action_goes_through_the_service(admin_client_as_maya, hiring):
    response = admin_client_as_maya.post(
        reverse("admin:records_record_changelist"),
        {"action": "archive_selected", "_selected_action": [hiring.kirat.pk, hiring.abhishek.pk]},
    )
    assert response.status_code == 302
    archived = AuditEvent.objects.filter(kind="record.archived", actor_id=USER)
    assert set(archived.values_list("record_id", flat=True)) == {
        hiring.kirat.pk,
        hiring.abhishek.pk,
    }


def test_archived_record_page_is_read_only(admin_client_as_maya, hiring, ctx):
    services.record_archive(ctx=ctx, record_id=hiring.kirat.pk, expected_version=1)
    url = reverse("admin:records_record_change", args=[hiring.kirat.pk])
    page = admin_client_as_maya.get(url)
    assert page.status_code == 200
    assert "title and data can no longer change" in page.content.decode()
    form = admin_client_as_maya.get(url, {"edit": "1"})
    assert "title" not in form.context["adminform"].form.fields


def test_audit_events_cannot_be_added_changed_or_deleted(admin_client_as_maya, hiring):
    event = AuditEvent.objects.filter(record_id=hiring.kirat.pk).first()
    assert event is not None
    before = (event.kind, event.decision_reason)
    change = reverse("admin:records_auditevent_change", args=[event.pk])

    assert admin_client_as_maya.get(reverse("admin:records_auditevent_add")).status_code == 403
    view = admin_client_as_maya.get(change)
    assert view.status_code == 200 and not view.context["has_change_permission"]
    assert admin_client_as_maya.post(change, {"decision_reason": "edited"}).status_code == 403
    delete = reverse("admin:records_auditevent_delete", args=[event.pk])
    assert admin_client_as_maya.post(delete, {"post": "yes"}).status_code == 403
    bulk = admin_client_as_maya.post(
        reverse("admin:records_auditevent_changelist"),
        {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"},
    )
    assert bulk.status_code in (200, 302)
    event.refresh_from_db()
    assert (event.kind, event.decision_reason) == before


def test_records_and_collections_cannot_be_deleted(admin_client_as_maya, hiring):
    for name, obj in (("record", hiring.kirat), ("collection", hiring.people)):
        url = reverse(f"admin:records_{name}_delete", args=[obj.pk])
        assert admin_client_as_maya.post(url, {"post": "yes"}).status_code == 403
    assert Record.objects.filter(pk=hiring.kirat.pk).exists()


def test_removing_a_link_in_the_relationship_admin_is_audited(admin_client_as_maya, hiring):
    rel = Relationship.objects.get(source=hiring.coding_interview)
    url = reverse("admin:records_relationship_delete", args=[rel.pk])
    assert admin_client_as_maya.post(url, {"post": "yes"}).status_code == 302
    assert not Relationship.objects.filter(pk=rel.pk).exists()
    event = AuditEvent.objects.get(kind="relationship.deleted", entity_id=rel.pk)
    assert event.actor_id == USER


def test_adding_a_link_in_the_relationship_admin_goes_through_the_service(
    admin_client_as_maya, hiring
):
    response = admin_client_as_maya.post(
        reverse("admin:records_relationship_add"),
        {
            "source": hiring.kirat_frontend.pk,
            "relationship_type": "referred_by",
            "target": hiring.abhishek.pk,
            "change_reason": "Abhishek referred him",
        },
    )
    assert response.status_code == 302, response.content.decode()[:1500]
    event = AuditEvent.objects.get(kind="relationship.created", actor_id=USER)
    assert event.decision_reason == "Abhishek referred him"
