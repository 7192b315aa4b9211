"""The dashboard's counts match what it lists, with "+N more" to the rest; open and unsynced
agendas; whose workspace each item is for a person who sees several; one line per import."""

from __future__ import annotations

import re
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from records import services
from records.models import AuditEvent, Record
from tests.admin.review_helpers import AGENT, gate, held_update
from tests.admin.review_imports import referral_import
from workflow.actions import commit_write, prepare_write
from workflow.agendas.steps import agenda_start
from workflow.resolution import resolve_record


def dashboard(client) -> str:
    response = client.get(reverse("admin:index"))
    assert response.status_code == 200
    return response.content.decode()


def panel(page: str, panel_id: str) -> str:
    start = page.index(f'id="{panel_id}"')
    ends = [page.find(m, start + 1) for m in ('<div class="anchor-panel"', 'class="app-')]
    return page[start : min(e for e in ends if e > 0)]


def items(part: str) -> int:
    return len(re.findall(r"<li[ >]", part))


def test_the_queue_count_matches_the_list_and_says_how_many_more(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    for n in range(12):
        held_update(hiring.kirat, {f"note{n}": "x"})
    queue = panel(dashboard(admin_client_as_maya), "dashboard-queue")
    assert "Writes awaiting your approval (12)" in queue
    assert items(queue) == 10
    more = re.search(r'<a href="([^"]+)" class="anchor-more">\+2 more</a>', queue)
    assert more and "queue=pending" in more.group(1)


def test_a_short_queue_has_no_more_link(admin_client_as_maya, hiring, ctx):
    gate(ctx, hiring.people)
    held_update(hiring.kirat, {"stage": "offer"})
    queue = panel(dashboard(admin_client_as_maya), "dashboard-queue")
    assert "(1)" in queue and items(queue) == 1 and "more</a>" not in queue


def agent_update(record_id: str, changes: dict[str, str], clarification: str) -> None:
    """An ungated agent update, committed at once, carrying a clarification."""
    record = Record.objects.get(pk=record_id)
    review = resolve_record(AGENT, query=record.title, collection_id=record.collection_id)
    prepared = prepare_write(
        AGENT,
        operation="update_record",
        arguments={"record_id": record.pk, "changes": changes, "expected_version": record.version},
        review_ids=[review["resolution_id"]],
        decision_reason="From the debrief.",
        clarification=clarification,
    )
    assert commit_write(AGENT, action_id=prepared["action_id"])["status"] == "committed"


def test_unreviewed_clarifications_are_counted_with_more(admin_client_as_maya, hiring):
    for n in range(12):
        agent_update(hiring.kirat.pk, {f"note{n}": "x"}, f"The user said note {n}.")
    part = panel(dashboard(admin_client_as_maya), "dashboard-clarifications")
    assert "not yet reviewed by a person (12)" in part
    assert items(part) == 10 and "+2 more</a>" in part


def test_open_and_unsynced_agendas_are_on_the_dashboard(admin_client_as_maya, hiring):
    started = agenda_start(
        AGENT,
        title="Backend hiring loop",
        items=["Screen Kirat"],
        source_reference="the hiring manager's message",
    )
    part = panel(dashboard(admin_client_as_maya), "dashboard-agendas")
    assert "Agendas open or not yet synced (1)" in part
    url = reverse("admin:workflow_agenda_change", args=[started["agenda_id"]])
    assert f'<a href="{url}">Backend hiring loop</a>' in part and "active" in part
    listed = admin_client_as_maya.get(
        reverse("admin:workflow_agenda_changelist"), {"attention": "open_or_unsynced"}
    )
    assert "Backend hiring loop" in listed.content.decode()


def test_no_agendas_says_so(admin_client_as_maya, hiring):
    part = panel(dashboard(admin_client_as_maya), "dashboard-agendas")
    assert "(0)" in part and "No agenda is open" in part


def test_one_import_is_one_line_in_recent_changes(admin_client_as_maya, hiring):
    held = referral_import(hiring)  # not gated: applied at once, 3 records and 2 links
    recent = panel(dashboard(admin_client_as_maya), "dashboard-recent")
    url = reverse("admin:workflow_preparedaction_change", args=[held.pk])
    assert recent.count(url) == 1
    line = recent[recent.index(url) :].split("</li>")[0]
    assert "Created 3" in line and "Linked 2" in line
    # No line of its own for any of its links or rows: every mention is in that one line.
    for named in ("referred_by", "interested_in → Junior Backend", "Meera Iyer"):
        assert recent.count(named) == line.count(named), named


def test_a_superuser_sees_whose_workspace_each_item_is(admin_client_as_maya, teams):
    page = dashboard(admin_client_as_maya)
    queue = panel(page, "dashboard-queue")
    assert 'anchor-workspace">team-a<' in queue and 'anchor-workspace">team-b<' in queue
    assert 'anchor-workspace">team-a<' in panel(page, "dashboard-recent")


def test_a_person_in_one_workspace_sees_no_labels(client, teams):
    alpha, _ = teams
    client.force_login(alpha.staff)
    page = dashboard(client)
    assert 'class="anchor-badge anchor-workspace"' not in page
    services.workspace_ensure("team-c")  # a workspace they are not in changes nothing
    assert 'class="anchor-badge anchor-workspace"' not in dashboard(client)


def test_recent_changes_see_past_two_big_writes(admin_client_as_maya, hiring):
    """Two writes of 300 events each after an earlier agent change: each write is one line,
    and the earlier change is still listed (not hidden behind the writes' events)."""
    services.record_update(
        ctx=services.WriteContext(workspace_id="local", actor_id="local-agent"),
        record_id=hiring.abhishek.pk,
        changes={"earlier": "yes"},
        expected_version=Record.objects.get(pk=hiring.abhishek.pk).version,
    )
    earlier = AuditEvent.objects.filter(record_id=hiring.abhishek.pk).latest("created_at")
    later = timezone.now() + timedelta(minutes=1)
    AuditEvent.objects.bulk_create(
        AuditEvent(
            workspace_id="local",
            actor_id="local-agent",
            kind="record.updated",
            entity_type="record",
            entity_id=hiring.kirat.pk,
            record_id=hiring.kirat.pk,
            action_id=action_id,
            created_at=later + timedelta(seconds=i),
        )
        for action_id in ("a" * 36, "b" * 36)
        for i in range(300)
    )
    recent = panel(dashboard(admin_client_as_maya), "dashboard-recent")
    for action_id in ("a" * 36, "b" * 36):
        url = reverse("admin:workflow_preparedaction_change", args=[action_id])
        assert recent.count(url) == 1 and "Data updated 300" in recent
    assert reverse("admin:records_auditevent_change", args=[earlier.pk]) in recent
