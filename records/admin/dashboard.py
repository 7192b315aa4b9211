"""The admin index as a dashboard of the signed-in person's workspaces: what needs a person first
(writes awaiting approval, unreviewed clarifications, recent agent changes); the internal tables
under "Diagnostics" so they do not read as work to do."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import Count, F, Max, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from records.acting import agents_acts
from records.admin.audit import event_subject, with_titles
from records.admin.common import PANELS
from records.admin.scoping import member_workspace_ids, reachable, sees_several_workspaces
from records.admin.timeline import readable_kind
from records.models import AuditEvent

LIST_LIMIT = 10
RECENT_LIMIT = 15
NAMED_IN_LINE = 3
DIAGNOSTICS = frozenset(
    {"RevisionCounter", "ReviewTicket", "RecordVersion", "AgendaEvent", "ClarificationReview"}
)


def _row(event: AuditEvent) -> dict[str, Any]:
    return {
        "event": event,
        "what": readable_kind(event.kind),
        "about": event_subject(event),
        "url": reverse("admin:records_auditevent_change", args=[event.pk]),
    }


def _rows(events: QuerySet[AuditEvent], limit: int) -> list[dict[str, Any]]:
    return [_row(event) for event in with_titles(events)[:limit]]


def _write_line(first: AuditEvent, kinds: Counter[str], named: list[AuditEvent]) -> dict[str, Any]:
    """One line for every event one agent write made ("Created 47 · Linked 40")."""
    total = sum(kinds.values())
    what = " · ".join(f"{readable_kind(kind)} {n}" for kind, n in kinds.most_common())
    about = format_html_join(", ", "{}", ((event_subject(e),) for e in named[:NAMED_IN_LINE]))
    if total > NAMED_IN_LINE:
        about = format_html("{} and {} more", about, total - min(len(named), NAMED_IN_LINE))
    # By URL name: the store does not import the workflow that owns prepared actions.
    url = reverse("admin:workflow_preparedaction_change", args=[first.action_id])
    return {"event": first, "what": what, "about": about, "url": url, "grouped": total}


def _recent(events: QuerySet[AuditEvent]) -> list[dict[str, Any]]:
    """The newest agent changes: one line per agent write (an import's rows and links, a
    batch's items share one line that counts them), one per event made outside a write.
    Grouped by the database, so it is right however many events the newest writes made."""
    writes = list(
        events.exclude(action_id="")
        .values("action_id")
        .annotate(latest=Max("created_at"))
        .order_by("-latest")[:RECENT_LIMIT]
    )
    loose = list(with_titles(events.filter(action_id=""))[:RECENT_LIMIT])
    newest_first = sorted(
        [(w["latest"], w["action_id"]) for w in writes] + [(e.created_at, e) for e in loose],
        key=lambda pair: pair[0],
        reverse=True,
    )[:RECENT_LIMIT]
    shown = [key for _, key in newest_first if isinstance(key, str)]
    kinds: dict[str, Counter[str]] = {key: Counter() for key in shown}
    counted = (
        events.filter(action_id__in=shown)
        .values_list("action_id", "kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    for action_id, kind, n in counted:
        kinds[action_id][kind] = n
    # The newest few events of each write, to name what it touched.
    place = Window(
        RowNumber(),
        partition_by=[F("action_id")],
        order_by=[F("created_at").desc(), F("id").desc()],
    )
    named: dict[str, list[AuditEvent]] = {key: [] for key in shown}
    firsts = with_titles(events.filter(action_id__in=shown)).annotate(place=place)
    for event in firsts.filter(place__lte=NAMED_IN_LINE).order_by("action_id", "place"):
        named[event.action_id].append(event)
    lines = []
    for _, key in newest_first:
        if isinstance(key, AuditEvent):
            lines.append(_row(key))
        elif sum(kinds[key].values()) > 1:
            lines.append(_write_line(named[key][0], kinds[key], named[key]))
        else:
            lines.append(_row(named[key][0]))
    return lines


def dashboard(request: HttpRequest, app_list: list[dict[str, Any]]) -> dict[str, Any]:
    workspaces = member_workspace_ids(request)
    events = reachable(request, AuditEvent).order_by("-created_at", "-id")
    unreviewed = events.exclude(agent_reported_clarification="").filter(
        clarification_reviews__isnull=True
    )
    unreviewed_count = unreviewed.count()
    audit = reverse("admin:records_auditevent_changelist")
    main, diagnostics = [], []
    for app in app_list:
        models = [m for m in app["models"] if m["object_name"] not in DIAGNOSTICS]
        internal = [m for m in app["models"] if m["object_name"] in DIAGNOSTICS]
        if models:
            main.append({**app, "models": models})
        if internal:
            diagnostics.append({**app, "models": internal})
    shown = _rows(unreviewed, LIST_LIMIT) if unreviewed_count else []
    return {
        "panels": [panel(request) for panel in PANELS["dashboard"]],
        "workspaces": sorted(workspaces) if workspaces is not None else None,
        "several_workspaces": sees_several_workspaces(request),
        "unreviewed": shown,
        "unreviewed_count": unreviewed_count,
        "unreviewed_more": unreviewed_count - len(shown),
        "unreviewed_url": f"{audit}?clarification=unreviewed",
        "recent": _recent(events.filter(agents_acts())),
        "audit_url": audit,
        "main_apps": main,
        "diagnostic_apps": diagnostics,
    }
