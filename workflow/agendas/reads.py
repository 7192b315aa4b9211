"""agenda_view: the list of agendas, one agenda's whole picture with its token, or its health."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, IntegerField, Value, When

from records.errors import invalid
from workflow.agendas.guard import load_agenda
from workflow.agendas.health import check_health
from workflow.agendas.lifecycle import closure_summary, presented
from workflow.models.agendas import Agenda
from workflow.scope import Scope

VIEWS = ("picture", "health")
LIST_LIMIT = 20


def list_agendas(scope: Scope) -> dict[str, Any]:
    open_first = Case(
        When(status=Agenda.ACTIVE, then=Value(0)),
        When(status=Agenda.PAUSED, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    agendas = Agenda.objects.filter(workspace_id=scope.workspace_id).order_by(
        open_first, "-updated_at"
    )[: LIST_LIMIT + 1]
    rows = [
        {
            "agenda_id": a.pk,
            "title": a.title,
            "status": a.status,
            "revision": a.revision,
            "started_by": a.actor_id,
            "sync_state": a.sync_state,
            "updated_at": a.updated_at.isoformat(),
        }
        for a in agendas
    ]
    return {
        "agendas": rows[:LIST_LIMIT],
        "truncated": len(rows) > LIST_LIMIT,
        "note": "Active and paused agendas first. Pass agenda_id to see one with its cursor_token.",
    }


def view_agenda(scope: Scope, *, agenda_id: Any = None, view: Any = "picture") -> dict[str, Any]:
    if view not in VIEWS:
        raise invalid("view", f"{view!r} is not one of {list(VIEWS)}.")
    if agenda_id is None:
        if view != "picture":
            raise invalid("agenda_id", f"view={view} needs an agenda_id.")
        return list_agendas(scope)
    agenda = load_agenda(scope, agenda_id)
    if view == "health":
        return check_health(agenda)
    result = presented(agenda)
    if agenda.is_closed:
        result["closure"] = closure_summary(agenda)
    return result
