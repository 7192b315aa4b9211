"""Tokens and memberships in the admin: a token is shown once, revoked, never read back."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from records.models import Workspace
from records.models.membership import AccessToken, WorkspaceMembership
from records.selectors import access_token_find, token_digest
from records.services import access_token_create, workspace_membership_add

CHANGELISTS = ["records_accesstoken", "records_workspacemembership"]


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user(username="alice")


@pytest.mark.parametrize("name", CHANGELISTS)
def test_changelists_and_add_pages_render(admin_client, alice, name):
    access_token_create(user=alice, name="laptop")
    assert admin_client.get(reverse(f"admin:{name}_changelist")).status_code == 200
    assert admin_client.get(reverse(f"admin:{name}_add")).status_code == 200


def test_a_token_made_in_the_admin_is_shown_once(admin_client, alice):
    workspace_membership_add(user=alice, workspace_id="team-a")  # only members are offered
    response = admin_client.post(
        reverse("admin:records_accesstoken_add"), {"user": alice.pk, "name": "ci"}
    )
    assert response.status_code == 200, "the token page is rendered, not redirected to"
    assert "no-store" in response["Cache-Control"]
    token = AccessToken.objects.get()
    raw = response.context["raw_token"]
    assert raw in response.content.decode()
    assert token.key_hash == token_digest(raw) and access_token_find(raw) == token
    assert raw not in str(response.cookies), "never carried in a cookie"

    for page in (
        reverse("admin:records_accesstoken_changelist"),
        reverse("admin:records_accesstoken_change", args=[token.pk]),
    ):
        shown = admin_client.get(page)
        assert shown.status_code == 200
        body = shown.content.decode()
        assert token.prefix in body
        assert raw not in body and token.key_hash not in body


def test_tokens_cannot_be_edited_or_deleted_only_revoked(admin_client, alice):
    token, raw = access_token_create(user=alice, name="laptop")
    change = reverse("admin:records_accesstoken_change", args=[token.pk])
    admin_client.post(change, {"user": alice.pk, "name": "renamed"})
    token.refresh_from_db()
    assert token.name == "laptop"
    delete = reverse("admin:records_accesstoken_delete", args=[token.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403

    response = admin_client.post(
        reverse("admin:records_accesstoken_changelist"),
        {"action": "revoke_tokens", "_selected_action": [token.pk]},
        follow=True,
    )
    assert "Revoked 1 token" in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None and access_token_find(raw) is None


def test_memberships_are_added_and_removed_through_the_services(admin_client, alice):
    Workspace.objects.create(pk="team-a")
    response = admin_client.post(
        reverse("admin:records_workspacemembership_add"),
        {"user": alice.pk, "workspace": "team-a"},
    )
    assert response.status_code == 302, response.content
    membership = WorkspaceMembership.objects.get(user=alice)
    assert membership.workspace_id == "team-a"
    delete = reverse("admin:records_workspacemembership_delete", args=[membership.pk])
    admin_client.post(delete, {"post": "yes"})
    assert not WorkspaceMembership.objects.exists()
