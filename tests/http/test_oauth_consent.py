"""Consent at the authorization endpoint, seen from a browser and a client: it is skipped only
for a client a superuser registered to skip it; every redirect back, refusals included, names
the issuer (RFC 9207); a replayed code revokes what it bought (RFC 6749 §4.1.2); and sign-in
without a destination lands on a page that exists.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from oauth2_provider.models import get_access_token_model, get_application_model

from tests.http.oauth_browser import Browser, csrf_token, pkce_pair, redirect_query
from tests.http.test_live_server import LiveServer, live  # noqa: F401
from tests.http.test_oauth_flow import (
    PASSWORD,
    REDIRECT_URI,
    authorize_url,
    discover,
    exchange,
    make_person,
    mcp_status,
    refresh,
    register,
    signed_in_code,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

Application = get_application_model()


@pytest.fixture
def bob(transactional_db) -> Any:
    return make_person("bob", "team-b")


@pytest.fixture
def root(transactional_db) -> Any:
    return get_user_model().objects.create_superuser(username="root", password=PASSWORD)


@pytest.fixture
def browser(live_server, bob):
    person = Browser(live_server.url, "bob", PASSWORD)
    yield person
    person.close()


def skipping_client(owner: Any, name: str = "Skipping client") -> Any:
    return Application.objects.create(
        user=owner,
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT_URI,
        skip_authorization=True,
    )


def assert_consent_page(answered: httpx.Response, client_name: str) -> None:
    assert answered.status_code == 200, f"{answered.status_code}: {answered.headers}"
    assert "Location" not in answered.headers, "no redirect, so no code"
    assert client_name in answered.text and 'name="allow"' in answered.text


def assert_names_issuer(answered: httpx.Response, server: dict[str, Any]) -> dict[str, str]:
    assert answered.status_code == 302, f"{answered.status_code}: {answered.text[:500]}"
    query = parse_qs(urlsplit(answered.headers["Location"]).query)
    assert query.get("iss") == [server["issuer"]], f"one iss, the issuer's: {query}"
    return redirect_query(answered)


# --- who may skip consent ------------------------------------------------------------------


def test_a_client_a_superuser_registered_to_skip_consent_skips_it(live_server, browser, root):
    server = discover(live_server.url)
    client = skipping_client(root)
    verifier, challenge = pkce_pair()
    answered = browser.open_consent(authorize_url(server, client.client_id, challenge))
    query = assert_names_issuer(answered, server)
    assert query["state"] == "xyz" and query["code"]
    tokens = exchange(server, client.client_id, query["code"], verifier).json()
    assert mcp_status(live_server.url, tokens["access_token"]) == 200


@pytest.mark.parametrize("owner", ["staff", "nobody", "former superuser", "inactive superuser"])
def test_skip_authorization_set_by_anyone_else_skips_nothing(live_server, browser, owner):
    users = get_user_model().objects
    owners = {
        "staff": lambda: users.create_user(username="staff-alpha", is_staff=True),
        "nobody": lambda: None,
        "former superuser": lambda: users.create_user(username="former", is_staff=True),
        "inactive superuser": lambda: users.create_superuser(username="gone", is_active=False),
    }
    client = skipping_client(owners[owner](), name=f"Client of {owner}")
    server = discover(live_server.url)
    _, challenge = pkce_pair()
    answered = browser.open_consent(authorize_url(server, client.client_id, challenge))
    assert_consent_page(answered, f"Client of {owner}")
    assert not get_access_token_model().objects.filter(user__isnull=False).exists()


def test_an_earlier_consent_is_not_taken_as_consent_again(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    assert exchange(server, client_id, code, verifier).status_code == 200

    _, challenge = pkce_pair()
    again = browser.open_consent(
        authorize_url(server, client_id, challenge, approval_prompt="auto")
    )
    assert_consent_page(again, "Hand-rolled client")


# --- iss on every redirect -----------------------------------------------------------------


def test_every_error_redirect_names_the_issuer(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    verifier, challenge = pkce_pair()

    refusals = {
        "invalid_request": [
            authorize_url(server, client_id, verifier, code_challenge_method="plain"),
            authorize_url(server, client_id, "", code_challenge=None, code_challenge_method=None),
        ],
        "invalid_target": [
            authorize_url(server, client_id, challenge, resource="https://elsewhere.example/mcp"),
            authorize_url(server, client_id, challenge, resource=None),
            authorize_url(server, client_id, challenge, resource="not a uri"),
        ],
        "invalid_scope": [authorize_url(server, client_id, challenge, scope="admin")],
    }
    for error, urls in refusals.items():
        for url in urls:
            query = assert_names_issuer(browser.open_consent(url), server)
            assert query["error"] == error, f"{url}: {query}"
            assert query["state"] == "xyz"

    consent = browser.consent(authorize_url(server, client_id, challenge))
    denied = assert_names_issuer(browser.answer(consent, allow=False), server)
    assert denied["error"] == "access_denied"
    tampered = browser.answer(consent, allow=True, resource="https://elsewhere.example/mcp")
    assert assert_names_issuer(tampered, server)["error"] == "invalid_target"
    assert not get_access_token_model().objects.filter(user__isnull=False).exists()


# --- a replayed code -----------------------------------------------------------------------


def test_a_replayed_code_is_refused_and_revokes_the_tokens_it_bought(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    first = exchange(server, client_id, code, verifier).json()
    assert mcp_status(live_server.url, first["access_token"]) == 200

    other_code, other_verifier = signed_in_code(browser, server, client_id)
    other = exchange(server, client_id, other_code, other_verifier).json()

    replayed = exchange(server, client_id, code, verifier)
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert mcp_status(live_server.url, first["access_token"]) == 401
    assert refresh(server, client_id, first["refresh_token"]).status_code == 400
    assert mcp_status(live_server.url, other["access_token"]) == 200, "only that code's tokens"


def test_a_replayed_code_revokes_tokens_refreshed_from_it_too(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    first = exchange(server, client_id, code, verifier).json()
    rotated = refresh(server, client_id, first["refresh_token"]).json()
    assert mcp_status(live_server.url, rotated["access_token"]) == 200

    assert exchange(server, client_id, code, verifier).status_code == 400
    assert mcp_status(live_server.url, rotated["access_token"]) == 401
    assert refresh(server, client_id, rotated["refresh_token"]).status_code == 400


def test_a_code_replayed_by_another_client_revokes_nothing(live_server, browser):
    server = discover(live_server.url)
    client_id = register(server)
    stranger = register(server)
    code, verifier = signed_in_code(browser, server, client_id)
    tokens = exchange(server, client_id, code, verifier).json()

    assert exchange(server, stranger, code, verifier).status_code == 400
    assert mcp_status(live_server.url, tokens["access_token"]) == 200


# --- sign-in without a destination ---------------------------------------------------------


def sign_in_without_next(url: str, username: str) -> httpx.Response:
    with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as http:
        form = http.get("/oauth/sign-in/")
        assert form.status_code == 200
        return http.post(
            "/oauth/sign-in/",
            data={
                "csrfmiddlewaretoken": csrf_token(form.text),
                "username": username,
                "password": PASSWORD,
            },
        )


def test_sign_in_without_next_lands_on_a_page_that_exists(live_server, bob):
    landed = sign_in_without_next(live_server.url, "bob")
    assert landed.status_code == 200, landed.url
    assert landed.history and landed.history[0].status_code == 302
    assert "You are signed in as bob" in landed.text


def test_staff_signing_in_without_next_land_in_the_admin(live_server):
    get_user_model().objects.create_user(username="staff-alpha", password=PASSWORD, is_staff=True)
    landed = sign_in_without_next(live_server.url, "staff-alpha")
    assert landed.status_code == 200
    assert landed.url.path == "/admin/"


# --- the finding, tried again against the production server --------------------------------

SET_UP_TEAMS = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from records.services import workspace_membership_add
users = get_user_model().objects
staff = users.create_user(username="staff-alpha", password={PASSWORD!r}, is_staff=True)
staff.user_permissions.set(Permission.objects.filter(
    content_type__app_label__in=("records", "workflow", "auth", "oauth2_provider")))
workspace_membership_add(user=staff, workspace_id="team-a")
bob = users.create_user(username="bob", password={PASSWORD!r})
workspace_membership_add(user=bob, workspace_id="team-b")
"""
GIVE_STAFF_A_CLIENT = f"""
from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model
app = get_application_model().objects.create(
    user=get_user_model().objects.get(username="staff-alpha"), name="alpha tool",
    client_type="public", authorization_grant_type="authorization-code",
    redirect_uris={REDIRECT_URI!r})
print(app.pk, app.client_id)
"""
SHOW_CLIENTS = """
from oauth2_provider.models import get_application_model
for app in get_application_model().objects.order_by("pk"):
    print(app.name, app.user_id is not None, app.skip_authorization, app.redirect_uris or "-")
"""
SMUGGLED = {
    "skip_authorization": "on",
    "redirect_uris": "https://evil.example/cb",
    "allowed_origins": "https://evil.example",
}


def clients_on_file(served: LiveServer) -> str:
    """One line per application the server holds: name, has an owner, skips, callbacks."""
    return served.manage("shell", "--no-imports", "-c", SHOW_CLIENTS).strip()


def admin_session(url: str, username: str) -> httpx.Client:
    http = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    form = http.get("/admin/login/")
    signed_in = http.post(
        "/admin/login/",
        data={
            "csrfmiddlewaretoken": csrf_token(form.text),
            "username": username,
            "password": PASSWORD,
            "next": "/admin/",
        },
    )
    assert signed_in.status_code == 302 and signed_in.headers["Location"] == "/admin/"
    return http


def test_a_staff_member_cannot_send_another_workspace_past_consent(live):  # noqa: F811
    live.manage("shell", "--no-imports", "-c", SET_UP_TEAMS)
    staff = admin_session(live.url, "staff-alpha")
    try:
        add_page = staff.get("/admin/oauth2_provider/application/add/")
        assert add_page.status_code == 200
        assert 'name="skip_authorization"' not in add_page.text
        assert 'name="redirect_uris"' not in add_page.text
        refused = staff.post(
            "/admin/oauth2_provider/application/add/",
            data={
                "csrfmiddlewaretoken": csrf_token(add_page.text),
                "name": "Totally legit",
                "client_id": "totally-legit",
                "client_type": "public",
                "authorization_grant_type": "authorization-code",
                "algorithm": "",
                **SMUGGLED,
            },
        )
        assert refused.status_code == 200 and "only a superuser sets those" in refused.text
        assert clients_on_file(live) == ""

        pk, client_id = live.manage("shell", "--no-imports", "-c", GIVE_STAFF_A_CLIENT).split()
        change_page = staff.get(f"/admin/oauth2_provider/application/{pk}/change/")
        assert change_page.status_code == 200
        changed = staff.post(
            f"/admin/oauth2_provider/application/{pk}/change/",
            data={
                "csrfmiddlewaretoken": csrf_token(change_page.text),
                "name": "alpha tool",
                "client_id": client_id,
                "client_type": "public",
                "authorization_grant_type": "authorization-code",
                "algorithm": "",
                **SMUGGLED,
            },
        )
        assert changed.status_code == 302
        listed = staff.get("/admin/oauth2_provider/application/")
        assert "alpha tool" in listed.text, "the staff member sees the client they own"
    finally:
        staff.close()
    assert clients_on_file(live) == f"alpha tool True False {REDIRECT_URI}"

    server = discover(live.url)
    person = Browser(live.url, "bob", PASSWORD)
    try:
        _, challenge = pkce_pair()
        link = authorize_url(server, client_id, challenge)
        assert_consent_page(person.open_consent(link), "alpha tool")
        # Even with the flag on (set by hand in the database), a staff member's client asks.
        live.manage(
            "shell",
            "--no-imports",
            "-c",
            "from oauth2_provider.models import get_application_model; "
            "get_application_model().objects.update(skip_authorization=True)",
        )
        assert_consent_page(person.open_consent(link), "alpha tool")
    finally:
        person.close()
    assert "Traceback" not in live.log.read_text()
