"""Setting up a team in the admin, the refusals and limits around it: only a superuser adds a
workspace, a bad ID is refused with its fix, the roles hold exactly their listed permissions,
and a token is issued only to a person who is a member somewhere."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client

from records.models import Workspace, WorkspaceMembership
from records.roles import ROLES
from records.services import workspace_membership_add

pytestmark = pytest.mark.django_db

WORKSPACE_ADD = "/admin/records/workspace/add/"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_each_role_holds_exactly_its_listed_permissions():
    for name, role in ROLES.items():
        held = {
            (app, codename)
            for app, codename in Group.objects.get(name=name).permissions.values_list(
                "content_type__app_label", "codename"
            )
        }
        listed = {(app, codename) for app, codenames in role.items() for codename in codenames}
        assert held == listed, name
    assert Permission.objects.count() > 100, "a role is a handful, not every permission"


def test_a_superuser_adds_a_workspace_and_becomes_its_member(admin_client_as_maya, reviewer):
    added = admin_client_as_maya.post(WORKSPACE_ADD, {"id": "team-x", "_save": "Save"})
    assert added.status_code == 302
    assert WorkspaceMembership.objects.filter(user=reviewer, workspace_id="team-x").exists()


def test_a_bad_workspace_id_is_refused_with_its_fix(admin_client_as_maya):
    refused = admin_client_as_maya.post(
        WORKSPACE_ADD, {"id": "no spaces", "_save": "Save"}, follow=True
    )
    assert "is not a valid workspace ID; use 1-64 letters" in refused.text
    assert not Workspace.objects.filter(id="no spaces").exists()


def test_a_staff_member_cannot_add_a_workspace():
    staff = get_user_model().objects.create_user(username="sam", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename="add_workspace"))
    workspace_membership_add(user=staff, workspace_id="team-a")
    client = signed_in(get_user_model().objects.get(pk=staff.pk))
    assert client.post(WORKSPACE_ADD, {"id": "team-x", "_save": "Save"}).status_code == 403
    assert not Workspace.objects.filter(id="team-x").exists()


def test_a_token_is_offered_only_for_active_members(admin_client_as_maya):
    users = get_user_model().objects
    workspace_membership_add(user=users.create_user(username="dana"), workspace_id="team-a")
    users.create_user(username="nobody-yet")
    gone = users.create_user(username="gone")
    workspace_membership_add(user=gone, workspace_id="team-a")
    gone.is_active = False
    gone.save()
    page = admin_client_as_maya.get("/admin/records/accesstoken/add/")
    offered = [str(user) for user in page.context["adminform"].form.fields["user"].queryset]
    assert offered == ["dana"]


def test_a_member_without_a_role_gets_no_admin_sign_in(admin_client_as_maya):
    dana = get_user_model().objects.create_user(username="dana")
    Workspace.objects.create(id="team-b")
    page = admin_client_as_maya.get("/admin/records/workspacemembership/add/")
    assert [value for value, _ in page.context["adminform"].form.fields["role"].choices] == [
        "",
        "member",
        "reviewer",
    ]
    added = admin_client_as_maya.post(
        "/admin/records/workspacemembership/add/",
        {"user": dana.pk, "workspace": "team-b", "role": "", "_save": "Save"},
    )
    assert added.status_code == 302
    dana.refresh_from_db()
    assert not dana.is_staff and not dana.groups.exists()
    assert WorkspaceMembership.objects.filter(user=dana, workspace_id="team-b").exists()
