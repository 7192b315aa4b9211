"""The approval queue where a person already is: on the record a held write would change, and
on the admin index. Registered with records.admin.panels (the store does not import us).

Both look for pending writes in one query and check them for staleness first, so a write that
can no longer apply says so here instead of waiting for someone to press Approve.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from records.admin.panels import dashboard_panel, record_panel
from records.admin.scoping import sees_several_workspaces
from workflow.actions import mark_stale_pending
from workflow.admin.overlaps import names_any
from workflow.admin.queue import queue_rows, summarise
from workflow.admin.states import state_badge
from workflow.models import ActionState, PreparedAction

DASHBOARD_LIMIT = 10
RECORD_LIMIT = 20


def _refreshed(rows: QuerySet[PreparedAction], limit: int) -> list[Any]:
    found = list(rows.order_by("-created_at").values_list("pk", "workspace_id")[:limit])
    by_workspace: dict[str, list[str]] = {}
    for pk, workspace_id in found:
        by_workspace.setdefault(workspace_id, []).append(pk)
    for workspace_id, ids in by_workspace.items():
        mark_stale_pending(workspace_id, ids)
    shown: list[Any] = list(
        queue_rows(PreparedAction.objects.filter(pk__in=[pk for pk, _ in found]))
    )
    shown.sort(key=lambda a: a.created_at, reverse=True)
    summarise(shown)
    for action in shown:
        action.badge = state_badge(action.state)
        action.url = reverse("admin:workflow_preparedaction_change", args=[action.pk])
    return shown


@record_panel
def pending_on_record(request: HttpRequest, record: Any) -> SafeString:
    waiting = PreparedAction.objects.filter(
        workspace_id=record.workspace_id, state=ActionState.AWAITING_APPROVAL
    ).filter(names_any([record.pk]))
    if not waiting.exists():
        return mark_safe("")
    actions = _refreshed(waiting, RECORD_LIMIT)
    return mark_safe(
        render_to_string("admin/workflow/pending_on_record.html", {"actions": actions})
    )


@dashboard_panel
def queue_on_dashboard(request: HttpRequest, workspaces: frozenset[str] | None) -> SafeString:
    waiting = PreparedAction.objects.filter(state=ActionState.AWAITING_APPROVAL)
    if workspaces is not None:
        waiting = waiting.filter(workspace_id__in=workspaces)
    refreshed = _refreshed(waiting, DASHBOARD_LIMIT) if waiting.exists() else []
    # Counted after the refresh, so the heading, the list and "+N more" agree: a write found
    # stale just now is named apart, not counted as waiting.
    total = waiting.count() if refreshed else 0
    actions = [a for a in refreshed if a.state == ActionState.AWAITING_APPROVAL]
    queue_url = reverse("admin:workflow_preparedaction_changelist") + "?queue=pending"
    context = {
        "actions": actions,
        "stale_now": [a for a in refreshed if a.state != ActionState.AWAITING_APPROVAL],
        "total": total,
        "more": total - len(actions),
        "queue_url": queue_url,
        "several_workspaces": sees_several_workspaces(request),
    }
    return mark_safe(render_to_string("admin/workflow/queue_on_dashboard.html", context))
