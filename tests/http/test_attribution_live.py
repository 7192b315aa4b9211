"""Attribution against a live server: an OAuth agent's write reads as that agent acting for its
person, over MCP and in the admin; on /agents/ a person sees each credential and revokes one
while the others keep working.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from mcp import ClientSession
from oauth2_provider.models import get_application_model

from records.acting import acted_by
from records.models import AuditEvent
from records.services import access_token_create
from tests.e2e.server import call_ok
from tests.http.oauth_browser import Browser, csrf_token, pkce_pair
from tests.http.test_live_server import guarded_write
from tests.http.test_oauth_flow import (  # noqa: F401
    MemoryStorage,
    alice,
    authorize_url,
    browser,
    connect_with_oauth,
    discover,
    exchange,
    make_person,
    mcp_status,
    refresh,
    register,
    signed_in_code,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CLIENT_NAME = "Anchor OAuth test client"
SHOWN = f"agent ({CLIENT_NAME}) for user:alice"


@pytest.fixture(autouse=True)
def feed_settles_at_once(settings):
    settings.ANCHOR_FEED_SETTLE_S = 0  # PostgreSQL's change feed holds back the newest events


def agents_page(person: Browser) -> str:
    page = person.http.get("/agents/")
    assert page.status_code == 200, page.text[:2000]
    return page.text


def revoke(person: Browser, key: str) -> str:
    form = {"csrfmiddlewaretoken": csrf_token(agents_page(person)), "credential": key}
    answered = person.http.post("/agents/", data=form)
    assert answered.status_code == 302, answered.text[:2000]
    return agents_page(person)


def test_an_oauth_agents_write_shows_as_that_agent_acting_for_its_person(
    live_server,
    browser,  # noqa: F811
):
    storage = MemoryStorage()
    record = asyncio.run(connect_with_oauth(live_server.url, browser, storage, guarded_write))
    client = get_application_model().objects.get(name=CLIENT_NAME)
    event = AuditEvent.objects.get(kind="record.created", record_id=record["record_id"])
    assert (event.actor_id, event.credential, event.credential_name) == (
        "user:alice",
        f"oauth:{client.pk}",
        CLIENT_NAME,
    )

    async def reads(session: ClientSession) -> tuple[Any, Any]:
        history = await call_ok(session, "get_record_history", {"record_id": record["record_id"]})
        feed = await call_ok(session, "list_changes", {"since": "2000-01-01T00:00:00Z"})
        return history, feed

    history, feed = asyncio.run(connect_with_oauth(live_server.url, browser, storage, reads))
    assert [(e["actor_id"], e["by"]) for e in history["events"]] == [("user:alice", SHOWN)]
    shown = {change["by"] for group in feed["changes"] for change in group["changes"]}
    assert shown == {SHOWN}, "the collection and the record, both by the agent"

    page = agents_page(browser)
    row = page.split(f'data-credential="oauth:{client.pk}"', 1)[1].split("</tr>", 1)[0]
    assert CLIENT_NAME in row and "Created: Priya" in row, row

    maya = Client()
    maya.force_login(get_user_model().objects.create_superuser("maya", password="correct horse"))
    audit = maya.get(reverse("admin:records_auditevent_changelist")).content.decode()
    assert SHOWN in audit and "(person)" not in audit
    record_page = maya.get(reverse("admin:records_record_change", args=[record["record_id"]]))
    assert SHOWN in record_page.content.decode()

    client.delete()  # the name was kept with the event: the history still says who
    assert acted_by(AuditEvent.objects.get(pk=event.pk)) == SHOWN
    assert SHOWN in maya.get(reverse("admin:records_auditevent_changelist")).content.decode()


def test_revoking_one_credential_stops_it_and_no_other(
    live_server,
    browser,  # noqa: F811
    alice,  # noqa: F811
):
    url = live_server.url
    server = discover(url)
    client_id = register(server)
    consent = browser.consent(authorize_url(server, client_id, pkce_pair()[1])).page
    assert "agent (Hand-rolled client) for user:alice" in consent, "how its writes will read"
    code, verifier = signed_in_code(browser, server, client_id)
    oauth = exchange(server, client_id, code, verifier).json()
    _, laptop = access_token_create(user=alice, name="laptop")
    _, desktop = access_token_create(user=alice, name="desktop")
    bob = make_person("bob", "team-b")
    bobs_token, bobs = access_token_create(user=bob, name="bob's phone")
    for token in (oauth["access_token"], laptop, desktop, bobs):
        assert mcp_status(url, token) == 200

    page = agents_page(browser)
    for name in ("Hand-rolled client", "laptop", "desktop"):
        assert name in page
    assert "bob" not in page, "a person sees their own credentials only"
    laptop_row = page.split("laptop", 1)[1].split("</tr>", 1)[0]
    assert "never" not in laptop_row, "its use just now is shown"

    client = get_application_model().objects.get(client_id=client_id)
    page = revoke(browser, f"oauth:{client.pk}")
    assert "Revoked Hand-rolled client" in page
    assert "Hand-rolled client</td>" not in page
    assert mcp_status(url, oauth["access_token"]) == 401
    assert refresh(server, client_id, oauth["refresh_token"]).status_code == 400
    assert [mcp_status(url, t) for t in (laptop, desktop, bobs)] == [200, 200, 200]

    laptop_pk = alice.anchor_tokens.get(name="laptop").pk
    revoke(browser, f"token:{laptop_pk}")
    assert [mcp_status(url, t) for t in (laptop, desktop, bobs)] == [401, 200, 200]

    page = revoke(browser, f"token:{bobs_token.pk}")
    assert "Nothing was revoked" in page
    assert mcp_status(url, bobs) == 200, "another person's token is not theirs to revoke"
    for refused in ("token:x", "token:²", "oauth:999999", "oauth:" + "9" * 30, "other:1", ""):
        assert "Nothing was revoked" in revoke(browser, refused)


def test_the_agents_page_asks_a_stranger_to_sign_in(live_server):
    answered = httpx.get(f"{live_server.url}/agents/")
    assert answered.status_code == 302
    assert "/oauth/sign-in/" in answered.headers["Location"]
