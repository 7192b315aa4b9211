"""What the agent is shown: the compact cursor state and the next step (the whole picture is
picture.py)."""

from __future__ import annotations

from typing import Any

from workflow.agendas.position import Position, load_position
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer


def item_view(item: AgendaItem) -> dict[str, Any]:
    view: dict[str, Any] = {"number": item.path, "text": item.text, "state": item.state}
    if item.conclusion:
        view["conclusion"] = item.conclusion
    if item.reason:
        view["reason"] = item.reason
    if item.awaiting_synthesis:
        view["awaiting_synthesis"] = True
    if item.record_id:
        view["record_id"] = item.record_id
    if item.earlier:
        view["earlier"] = item.earlier
    return view


def _layer_head(layer: AgendaLayer) -> dict[str, Any]:
    head: dict[str, Any] = {
        "kind": layer.kind,
        "label": layer.label.rstrip(".") or "root",
        "status": layer.status,
    }
    if layer.source_reference:
        head["source_reference"] = layer.source_reference
    if layer.unverified_reason:
        head["unverified_source_reason"] = layer.unverified_reason
    if layer.outcome:
        head["outcome"] = layer.outcome
    return head


def next_step(position: Position) -> str:
    agenda = position.agenda
    if agenda.status == Agenda.PAUSED:
        return "Paused. Call agenda_control action=resume to continue, or action=abandon."
    if agenda.is_closed:
        if agenda.sync_state == Agenda.SYNC_PENDING:
            return "Closed with outcomes for bound records: call agenda_sync_records now."
        return "Closed. Keep unresolved items as records if they need long-term memory."
    if agenda.pending_presentation_id:
        return (
            "Show whole_picture.text to the user first, then call agenda_acknowledge with "
            f"presentation_id {agenda.pending_presentation_id!r}. Progress is refused until then."
        )
    layer, focus = position.deepest, position.focus
    assert layer is not None
    if focus is not None and focus.awaiting_synthesis:
        return (
            f"A child list of item {focus.path} returned. Review its outcomes, then call "
            "agenda_step action=revise with the parent's conclusion taking them into account."
        )
    if focus is not None and focus.state == AgendaItem.CURRENT:
        return (
            f"Discuss item {focus.path} with the user, then agenda_step action=complete "
            "(with the conclusion), defer or block (with the reason)."
        )
    if layer.items.filter(state=AgendaItem.OPEN).exists():
        return "Call agenda_step action=next to move to the next open item of this list."
    if layer.kind == AgendaLayer.ROOT:
        return "Every item is resolved: call agenda_control action=finish with a closing summary."
    return f"Every item of this {layer.kind} list is resolved: call agenda_return with its outcome."


def state_view(position: Position) -> dict[str, Any]:
    """Returned by every agenda tool: enough to take the next step, with the current token."""
    agenda, layer, focus = position.agenda, position.deepest, position.focus
    view: dict[str, Any] = {
        "agenda_id": agenda.pk,
        "title": agenda.title,
        "status": agenda.status,
        "revision": agenda.revision,
        "cursor_token": position.token,
        "layer": _layer_head(layer) if layer else None,
        "current_item": item_view(focus) if focus else None,
        "pending_presentation_id": agenda.pending_presentation_id or None,
        "sync_state": agenda.sync_state,
        "next_step": next_step(position),
    }
    return view


def current_state(agenda: Agenda) -> dict[str, Any]:
    return state_view(load_position(agenda))
