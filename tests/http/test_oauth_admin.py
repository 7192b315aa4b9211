"""OAuth applications in the admin, posted as a browser posts the real forms: only a superuser
sets an application's owner, callbacks or "skip authorization"; a staff member holding every
model permission owns what they add and sees their own applications, nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from oauth2_provider.models import get_application_model

from records.services import workspace_membership_add
from tests.admin.forms import page_post_data
from tests.admin.teams import STAFF_APPS

pytestmark = pytest.mark.django_db

Application = get_application_model()
SUPERUSER_ONLY = (
    "user",
    "skip_authorization",
    "redirect_uris",
    "post_logout_redirect_uris",
    "allowed_origins",
)
LEGIT_CALLBACK = "http://127.0.0.1:33418/callback"
SMUGGLED = {
    "skip_authorization": "on",
    "redirect_uris": "https://evil.example/cb",
    "post_logout_redirect_uris": "https://evil.example/out",
    "allowed_origins": "https://evil.example",
}


def staff_member(username: str, workspace: str) -> Any:
    """The strongest staff account short of superuser: every permission Django has."""
    user = get_user_model().objects.create_user(username=username, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=STAFF_APPS))
    workspace_membership_add(user=user, workspace_id=workspace)
    return get_user_model().objects.get(pk=user.pk)


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(page: str, *args: Any) -> str:
    return reverse(f"admin:oauth2_provider_application_{page}", args=args)


def application(owner: Any, name: str, **fields: Any) -> Any:
    return Application.objects.create(
        user=owner,
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=LEGIT_CALLBACK,
        **fields,
    )


@pytest.fixture
def alpha() -> Any:
    return staff_member("staff-alpha", "team-a")


@pytest.fixture
def bravo() -> Any:
    return staff_member("staff-bravo", "team-b")


@pytest.fixture
def root() -> Any:
    return get_user_model().objects.create_superuser(username="root", password="x")


def add_form_post(page: Any, **fields: str) -> dict[str, Any]:
    data = page_post_data(page)
    data.update(fields)
    return data


def test_a_staff_members_form_has_none_of_the_superuser_fields(alpha):
    page = signed_in(alpha).get(url("add"))
    assert page.status_code == 200
    fields = set(page.context["adminform"].form.fields)
    assert fields and not fields & set(SUPERUSER_ONLY), fields


def test_staff_cannot_add_a_skipping_client_with_a_callback_of_their_choosing(alpha, bravo):
    client = signed_in(alpha)
    page = client.get(url("add"))
    refused = client.post(
        url("add"),
        add_form_post(
            page,
            name="Totally legit",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            user=str(bravo.pk),
            **SMUGGLED,
        ),
    )
    assert refused.status_code == 200, "the form is drawn again, with the reason"
    errors = refused.context["adminform"].form.errors
    assert "only a superuser sets those" in str(errors["authorization_grant_type"])
    assert not Application.objects.exists()


def test_what_a_staff_member_adds_is_theirs_and_asks_for_consent(alpha, bravo):
    client = signed_in(alpha)
    page = client.get(url("add"))
    made = client.post(
        url("add"),
        add_form_post(
            page,
            name="Nightly sync",
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
            user=str(bravo.pk),
            **SMUGGLED,
        ),
    )
    assert made.status_code == 302, made.context and made.context["adminform"].form.errors
    added = Application.objects.get(name="Nightly sync")
    assert added.user == alpha, "the owner is whoever added it"
    assert added.skip_authorization is False
    assert (added.redirect_uris, added.post_logout_redirect_uris, added.allowed_origins) == (
        "",
        "",
        "",
    )


def test_staff_cannot_turn_on_skipping_or_move_the_callback_of_their_own_client(alpha, bravo):
    own = application(alpha, "alpha desktop client")
    client = signed_in(alpha)
    page = client.get(url("change", own.pk))
    assert page.status_code == 200
    changed = client.post(
        url("change", own.pk),
        add_form_post(page, name="alpha renamed", user=str(bravo.pk), **SMUGGLED),
    )
    assert changed.status_code == 302
    own.refresh_from_db()
    assert own.name == "alpha renamed", "what staff may change, they change"
    assert own.user == alpha and own.skip_authorization is False
    assert own.redirect_uris == LEGIT_CALLBACK and own.allowed_origins == ""


def test_staff_see_their_own_applications_and_nothing_else(alpha, bravo):
    own = application(alpha, "alpha desktop client")
    theirs = application(bravo, "bravo desktop client")
    ownerless = application(None, "registered dynamically")
    client = signed_in(alpha)

    listed = client.get(url("changelist"))
    assert listed.status_code == 200
    assert list(listed.context["cl"].result_list) == [own]
    assert theirs.name not in listed.text and ownerless.name not in listed.text
    for other in (theirs, ownerless):
        assert client.get(url("change", other.pk)).status_code == 404
        refused = client.post(url("change", other.pk), {"name": "taken", **SMUGGLED})
        assert refused.status_code == 404
        other.refresh_from_db()
        assert other.skip_authorization is False and other.redirect_uris == LEGIT_CALLBACK


def test_a_superuser_sets_owner_callbacks_and_skipping(root, alpha):
    client = signed_in(root)
    page = client.get(url("add"))
    fields = page.context["adminform"].form.fields
    assert set(SUPERUSER_ONLY) <= set(fields)
    assert (
        "only while the owner (User) is an active superuser"
        in fields["skip_authorization"].help_text
    )
    made = client.post(
        url("add"),
        add_form_post(
            page,
            name="In-house client",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            user=str(root.pk),
            skip_authorization="on",
            redirect_uris="https://tools.example/cb",
        ),
    )
    assert made.status_code == 302, made.context and made.context["adminform"].form.errors
    added = Application.objects.get(name="In-house client")
    assert (added.user, added.skip_authorization, added.redirect_uris) == (
        root,
        True,
        "https://tools.example/cb",
    )


@pytest.mark.parametrize("who", ["root", "alpha"])
def test_no_one_adds_an_application_under_a_metadata_document_url(request, who):
    client = signed_in(request.getfixturevalue(who))
    page = client.get(url("add"))
    refused = client.post(
        url("add"),
        add_form_post(
            page,
            name="Shadow",
            client_id="https://tools.example/oauth/client.json",
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        ),
    )
    assert refused.status_code == 200, "the form is drawn again, with the reason"
    errors = refused.context["adminform"].form.errors
    assert "Client ID Metadata Document URL" in str(errors["client_id"])
    assert not Application.objects.exists()


def test_an_applications_page_offers_no_view_on_site_link(root):
    own = application(root, "In-house client")
    page = signed_in(root).get(url("change", own.pk))
    assert page.status_code == 200
    assert "View on site" not in page.text
