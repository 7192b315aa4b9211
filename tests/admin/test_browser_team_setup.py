"""A new team admin's first minutes, in a real browser: a superuser creates a workspace, adds a
person to it as a reviewer, issues that person a token by choosing them, and the token works
on /mcp; the token list then says when it was last used.
"""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from records.models import AccessToken, WorkspaceMembership
from records.roles import REVIEWER
from tests.admin.test_browser import PASSWORD, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "anchor-admin-tests", "version": "1"},
    },
}


def test_a_superuser_sets_up_a_team_in_the_admin(browser_page, live_server):
    page = browser_page
    root = get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    sign_in(page, live_server, root)

    page.goto(f"{live_server.url}/admin/records/workspace/add/")
    page.fill("#id_id", "team-x")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    assert WorkspaceMembership.objects.filter(user=root, workspace_id="team-x").exists()

    page.goto(f"{live_server.url}/admin/auth/user/add/")
    page.fill("#id_username", "dana")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    page.goto(f"{live_server.url}/admin/records/workspacemembership/add/")
    page.select_option("#id_user", label="dana")
    page.select_option("#id_workspace", label="team-x")
    page.select_option("#id_role", value="reviewer")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    row = page.locator("#result_list tbody tr", has_text="dana")
    assert "reviewer" in row.inner_text()
    dana = get_user_model().objects.get(username="dana")
    assert dana.is_staff and not dana.is_superuser
    assert list(dana.groups.values_list("name", flat=True)) == ["reviewer"]
    assert dana.has_perm("workflow.change_preparedaction")
    assert not dana.has_perm("records.add_workspacemembership")

    page.goto(f"{live_server.url}/admin/records/accesstoken/add/")
    offered = page.locator("#id_user option").all_inner_texts()
    assert "dana" in offered and "root" in offered, offered
    page.select_option("#id_user", label="dana")
    page.fill("#id_name", "dana's laptop")
    page.click("input[name=_save]")
    raw = page.locator("#anchor-new-token").inner_text().strip()
    assert raw.startswith("anchor_")
    assert AccessToken.objects.get(name="dana's laptop").user == dana

    answered = httpx.post(
        f"{live_server.url}/mcp",
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {raw}"},
    )
    assert answered.status_code == 200, answered.text
    assert answered.json()["result"]["serverInfo"]["name"] == "anchor"

    page.goto(f"{live_server.url}/admin/records/accesstoken/")
    used = page.locator("#result_list tbody tr", has_text="dana's laptop").locator(
        "td.field-last_used_at"
    )
    assert used.inner_text().strip() not in ("", "-", "—")
    assert Group.objects.get(name="reviewer").permissions.count() == sum(
        map(len, REVIEWER.values())
    )
