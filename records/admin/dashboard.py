"""The admin index as a dashboard of the signed-in person's workspaces.

What needs a person comes first: writes awaiting approval (drawn by the workflow's panel),
clarifications agents reported that nobody has reviewed yet, and what agents changed lately.
The tables behind them stay reachable; the internal ones (counters, tickets, versions, agenda
events) are listed under "Diagnostics" so they do not read as work to do.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from records.admin.audit import _subject
from records.admin.panels import DASHBOARD_PANELS
from records.admin.scoping import member_workspace_ids
from records.admin.timeline import readable_kind
from records.models import AuditEvent

RECENT_LIMIT = 15
DIAGNOSTICS = frozenset(
    {"RevisionCounter", "ReviewTicket", "RecordVersion", "AgendaEvent", "ClarificationReview"}
)


def _events(workspaces: frozenset[str] | None) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if workspaces is not None:
        events = events.filter(workspace_id__in=workspaces)
    return events


def _rows(events: QuerySet[AuditEvent]) -> list[dict[str, Any]]:
    return [
        {
            "event": event,
            "what": readable_kind(event.kind),
            "about": _subject(event),
            "url": reverse("admin:records_auditevent_change", args=[event.pk]),
        }
        for event in events[:RECENT_LIMIT]
    ]


def dashboard(request: HttpRequest, app_list: list[dict[str, Any]]) -> dict[str, Any]:
    workspaces = member_workspace_ids(request)
    events = _events(workspaces).order_by("-created_at", "-id")
    unreviewed = events.exclude(agent_reported_clarification="").filter(
        clarification_reviews__isnull=True
    )
    audit = reverse("admin:records_auditevent_changelist")
    main, diagnostics = [], []
    for app in app_list:
        models = [m for m in app["models"] if m["object_name"] not in DIAGNOSTICS]
        internal = [m for m in app["models"] if m["object_name"] in DIAGNOSTICS]
        if models:
            main.append({**app, "models": models})
        if internal:
            diagnostics.append({**app, "models": internal})
    return {
        "panels": [panel(request, workspaces) for panel in DASHBOARD_PANELS],
        "workspaces": sorted(workspaces) if workspaces is not None else None,
        "unreviewed": _rows(unreviewed),
        "unreviewed_url": f"{audit}?clarification=unreviewed",
        "recent": _rows(events.exclude(actor_id__startswith="user:")),
        "audit_url": audit,
        "main_apps": main,
        "diagnostic_apps": diagnostics,
    }
