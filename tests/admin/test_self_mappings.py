"""A person removes a wrong "me" mapping in the admin: through the service, audited as them."""

from __future__ import annotations

from django.contrib.admin.sites import site
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.test import RequestFactory
from django.urls import reverse

from records import services
from records.admin.links import SelfMappingAdmin
from records.models import AuditEvent, SelfMapping

CHANGELIST = reverse("admin:records_selfmapping_changelist")


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def map_me(ctx, record) -> SelfMapping:
    return services.self_mapping_set(ctx=ctx, record_id=record.pk, expected_version=record.version)


def test_remove_mapping_action_removes_it_audited_with_the_signed_in_user(
    admin_client_as_maya, hiring, ctx
):
    mapping = map_me(ctx, hiring.kirat)

    response = admin_client_as_maya.post(
        CHANGELIST,
        {"action": "remove_mappings", "_selected_action": [mapping.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert "Removed 1 self mapping(s)." in messages_of(response)
    assert not SelfMapping.objects.filter(actor_id=ctx.actor_id).exists()
    event = AuditEvent.objects.get(kind="record.self_unmapped")
    assert event.actor_id == "user:maya", "the person who removed it, never the agent"
    assert event.record_id == hiring.kirat.pk
    assert event.before == {"actor_id": ctx.actor_id, "record_id": hiring.kirat.pk}
    assert ctx.actor_id in event.decision_reason


def test_agent_can_map_itself_again_after_removal(admin_client_as_maya, hiring, ctx):
    mapping = map_me(ctx, hiring.kirat)
    admin_client_as_maya.post(
        CHANGELIST, {"action": "remove_mappings", "_selected_action": [mapping.pk]}
    )

    again = map_me(ctx, hiring.abhishek)

    assert again.record_id == hiring.abhishek.pk


def test_second_removal_reports_not_found_and_changes_nothing(
    admin_client_as_maya, reviewer, hiring, ctx
):
    mapping = map_me(ctx, hiring.kirat)
    # Two people had the changelist open; the second one's selection was read before the
    # first one's removal landed.
    second_persons_selection = SelfMapping.objects.filter(pk=mapping.pk)
    assert len(second_persons_selection) == 1  # evaluated now, as when their page was drawn
    admin_client_as_maya.post(
        CHANGELIST, {"action": "remove_mappings", "_selected_action": [mapping.pk]}
    )

    request = RequestFactory().post(CHANGELIST)
    request.user = reviewer
    setattr(request, "session", {})  # noqa: B010 - what the middleware would attach
    setattr(request, "_messages", FallbackStorage(request))  # noqa: B010
    SelfMappingAdmin(SelfMapping, site).remove_mappings(request, second_persons_selection)

    reported = [str(m) for m in get_messages(request)]
    assert any("Not removed" in m and "NOT_FOUND" in m for m in reported), reported
    assert AuditEvent.objects.filter(kind="record.self_unmapped").count() == 1


def test_removed_mapping_can_no_longer_be_selected(admin_client_as_maya, hiring, ctx):
    mapping = map_me(ctx, hiring.kirat)
    removal = {"action": "remove_mappings", "_selected_action": [mapping.pk]}
    admin_client_as_maya.post(CHANGELIST, removal, follow=True)  # shows "Removed 1"

    response = admin_client_as_maya.post(CHANGELIST, removal, follow=True)

    reported = messages_of(response)
    assert any("no longer exists" in m for m in reported), reported
    assert not any("Removed" in m for m in reported), reported
    assert AuditEvent.objects.filter(kind="record.self_unmapped").count() == 1


def test_remove_action_needs_the_delete_permission(client, django_user_model, hiring, ctx):
    map_me(ctx, hiring.kirat)
    viewer = django_user_model.objects.create_user(username="vic", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_selfmapping"))
    client.force_login(viewer)

    page = client.get(CHANGELIST)

    assert page.status_code == 200
    assert "remove_mappings" not in page.content.decode()
