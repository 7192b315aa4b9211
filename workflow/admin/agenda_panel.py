"""Agendas on the admin index: the ones still open, and the finished ones whose outcomes have
not reached their records yet. Registered with records.admin.panels (the store does not import
the workflow)."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from records.admin.panels import dashboard_panel
from records.admin.scoping import sees_several_workspaces
from workflow.admin import pending_panels  # noqa: F401  registered first: the queue leads
from workflow.admin.agendas import OPEN_OR_UNSYNCED
from workflow.models.agendas import Agenda

AGENDA_LIMIT = 10


@dashboard_panel
def agendas_on_dashboard(request: HttpRequest, workspaces: frozenset[str] | None) -> SafeString:
    agendas = Agenda.objects.filter(OPEN_OR_UNSYNCED)
    if workspaces is not None:
        agendas = agendas.filter(workspace_id__in=workspaces)
    total = agendas.count()
    shown = list(
        agendas.order_by("-updated_at").only(
            "id", "title", "status", "sync_state", "actor_id", "workspace_id", "updated_at"
        )[:AGENDA_LIMIT]
        if total
        else []
    )
    for agenda in shown:
        agenda.url = reverse("admin:workflow_agenda_change", args=[agenda.pk])  # type: ignore[attr-defined]
        agenda.unsynced = agenda.sync_state == Agenda.SYNC_PENDING  # type: ignore[attr-defined]
    listed = reverse("admin:workflow_agenda_changelist") + "?attention=open_or_unsynced"
    context = {
        "agendas": shown,
        "total": total,
        "more": total - len(shown),
        "list_url": listed,
        "several_workspaces": sees_several_workspaces(request),
    }
    return mark_safe(render_to_string("admin/workflow/agendas_on_dashboard.html", context))
