"""agenda_view: the list of agendas, one agenda's whole picture with its token, or its health."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, IntegerField, Value, When

from records.errors import invalid
from workflow.agendas.guard import load_agenda
from workflow.agendas.health import check_health
from workflow.agendas.lifecycle import closure_summary
from workflow.agendas.presentation import json_size, load_position, presented, short, state_view
from workflow.models.agendas import Agenda
from workflow.scope import Scope

LIST_LIMIT = 20
DIGEST_LIMIT = 10
ITEM_PREVIEW = 120


def _head(agenda: Agenda) -> dict[str, Any]:
    return {"agenda_id": agenda.pk, "title": agenda.title, "status": agenda.status}


def open_agendas(scope: Scope) -> dict[str, Any]:
    """Active and paused agendas, most recent first, for workspace_digest: a new conversation
    learns that a list is being worked through, where it stands, and what to do next."""
    agendas = Agenda.objects.filter(
        workspace_id=scope.workspace_id, status__in=[Agenda.ACTIVE, Agenda.PAUSED]
    ).order_by("-updated_at", "-id")[: DIGEST_LIMIT + 1]
    rows = []
    for agenda in agendas[:DIGEST_LIMIT]:
        state = state_view(load_position(agenda))
        item, step = state["current_item"], state["next_step"]
        if item:
            item = {"number": item["number"], "text": short(item["text"], ITEM_PREVIEW)}
        if agenda.pending_presentation_id:
            # The picture waiting to be shown is in agenda_view's reply, not the digest's.
            step = (
                f"Call agenda_view agenda_id={agenda.pk} for its whole picture; show "
                "whole_picture.text to the user, then agenda_acknowledge with the "
                "presentation_id it gives."
            )
        rows.append({**_head(agenda), "current_item": item, "next_step": step})
    return {"agendas": rows, "truncated": len(agendas) > DIGEST_LIMIT}


def unsynced_agendas(scope: Scope) -> dict[str, Any]:
    """Finished or abandoned agendas whose outcomes are not yet on their bound records, most
    recently closed first, for workspace_digest: a new conversation learns of them before
    agenda_start is refused for a record one of them still holds."""
    agendas = (
        Agenda.objects.filter(
            workspace_id=scope.workspace_id,
            status__in=Agenda.CLOSED,
            sync_state=Agenda.SYNC_PENDING,
        )
        .order_by("-updated_at", "-id")
        .only("id", "title", "status")[: DIGEST_LIMIT + 1]
    )
    rows = [_head(agenda) for agenda in agendas[:DIGEST_LIMIT]]
    return {"agendas": rows, "truncated": len(agendas) > DIGEST_LIMIT}


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
            **_head(a),
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


def view_agenda(
    scope: Scope, *, agenda_id: Any = None, view: Any = "picture", unfold_layer: Any = None
) -> dict[str, Any]:
    if unfold_layer is not None and view != "picture":
        raise invalid("unfold_layer", "only the picture view folds lists; omit it.")
    if agenda_id is None:
        if view != "picture" or unfold_layer is not None:
            field = "agenda_id" if view != "picture" else "unfold_layer"
            raise invalid(field, "needs an agenda_id: it applies to one agenda.")
        return list_agendas(scope)
    agenda = load_agenda(scope, agenda_id)
    if view == "health":
        return check_health(agenda)
    closure = closure_summary(agenda) if agenda.is_closed else None
    result = presented(agenda, unfold=unfold_layer, reserve=json_size(closure))
    if closure is not None:
        result["closure"] = closure
    return result
