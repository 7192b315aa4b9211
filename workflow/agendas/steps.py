"""Working through the deepest list: complete, defer, block, revise, next, revisit."""

from __future__ import annotations

from typing import Any

from records.errors import AnchorError, invalid
from workflow.agendas import inputs
from workflow.agendas.errors import SYNTHESIS_REQUIRED, order_error
from workflow.agendas.guard import Frame, mutate
from workflow.agendas.lifecycle import mark_sync_pending
from workflow.agendas.presentation import next_open, state_view
from workflow.agendas.sync import AWAITING
from workflow.models.agendas import AgendaConclusion, AgendaItem, AgendaLayer
from workflow.scope import Scope

ACTIONS = ("complete", "defer", "block", "revise", "next", "revisit")
TAKES_NUMBER = ("revise", "revisit")
NO_TEXT = ("next", "revisit")
WHAT = {
    "complete": "A conclusion",
    "defer": "The reason for deferring",
    "block": "The reason it is blocked",
    "revise": "The revised conclusion",
}


def _record(frame: Frame, item: AgendaItem, kind: str, text: str) -> None:
    AgendaConclusion.objects.create(
        item=item,
        sequence=item.conclusions.count() + 1,
        kind=kind,
        text=text,
        agenda_revision=frame.agenda.revision + 1,
        actor_id=frame.scope.actor_id,
        created_at=frame.now,
    )


def _outcome_changed(frame: Frame, item: AgendaItem) -> None:
    """A bound item's outcome moved after a sync wrote (or refused) the old one: the next sync
    must consider it again. A write awaiting approval is read first and compared then."""
    if item.record_id and item.sync_status not in ("", AWAITING):
        item.sync_status = ""
        item.save(update_fields=["sync_status"])
    mark_sync_pending(frame.agenda)


def _synthesis_error(frame: Frame, item: AgendaItem) -> AnchorError:
    return AnchorError(
        SYNTHESIS_REQUIRED,
        f"Item {item.path} awaits the synthesis of its child list. Review the child outcomes "
        "(whole picture), then agenda_step action=revise with a conclusion that takes them "
        "into account; only then can it move on.",
        item=item.path,
        current=state_view(frame.position),
    )


def _current_focus(frame: Frame, action: str) -> AgendaItem:
    focus = frame.position.focus
    if focus is not None and focus.awaiting_synthesis:
        raise _synthesis_error(frame, focus)
    if focus is None or focus.state != AgendaItem.CURRENT:
        where = f"item {focus.path} is already {focus.state}" if focus else "no item is current"
        raise order_error(
            f"Cannot {action}: {where}. Call agenda_step action=next to take the next open item "
            "(or action=revise to change a completed item's conclusion).",
            current=state_view(frame.position),
        )
    return focus


def _resolve(frame: Frame, action: str, text: str) -> dict[str, Any]:
    item = _current_focus(frame, action)
    if action == "complete":
        # A revisited item's earlier defer/block reason stays in its history, not its outcome.
        item.state, item.conclusion, item.reason = AgendaItem.COMPLETED, text, ""
        _record(frame, item, AgendaConclusion.CONCLUSION, text)
    else:
        item.state = AgendaItem.DEFERRED if action == "defer" else AgendaItem.BLOCKED
        item.reason = text
        _record(frame, item, item.state, text)
    item.save(update_fields=["state", "conclusion", "reason"])
    _outcome_changed(frame, item)
    return {"item": item.path, "state": item.state, "text": text}


def _target(frame: Frame, item_number: Any) -> AgendaItem:
    layer = frame.position.deepest
    assert layer is not None
    if item_number is None:
        focus = frame.position.focus
        assert focus is not None
        return focus
    if isinstance(item_number, bool) or not isinstance(item_number, int) or item_number < 1:
        raise invalid("item_number", "must be the number of an item in the current list.")
    item = layer.items.filter(number=item_number).first()
    if item is None:
        raise invalid(
            "item_number",
            f"the current list has no item {item_number}; revise works within the deepest "
            "list only.",
        )
    item.layer = layer
    return item


def _revise(frame: Frame, text: str, item_number: Any) -> dict[str, Any]:
    item = _target(frame, item_number)
    if item.awaiting_synthesis:
        item.awaiting_synthesis = False
        item.conclusion = text
        if item.state == AgendaItem.CURRENT:
            item.state = AgendaItem.COMPLETED
        _record(frame, item, AgendaConclusion.SYNTHESIS, text)
        kind = "synthesis"
    elif item.state == AgendaItem.COMPLETED:
        item.conclusion = text
        _record(frame, item, AgendaConclusion.REVISION, text)
        kind = "revision"
    else:
        raise order_error(
            f"Item {item.path} is {item.state}; revise changes the conclusion of a completed "
            "item (or records the synthesis after a child list). Use complete, defer or block "
            "for the current item.",
            current=state_view(frame.position),
        )
    item.save(update_fields=["state", "conclusion", "awaiting_synthesis"])
    _outcome_changed(frame, item)
    return {"item": item.path, "state": item.state, "text": text, "kind": kind}


def _leave_focus(frame: Frame, before: str) -> tuple[AgendaLayer, AgendaItem | None]:
    """The deepest list and its focus, which must be resolved before moving on."""
    layer, focus = frame.position.deepest, frame.position.focus
    assert layer is not None
    if focus is not None and focus.awaiting_synthesis:
        raise _synthesis_error(frame, focus)
    if focus is not None and focus.state == AgendaItem.CURRENT:
        raise order_error(
            f"Item {focus.path} is still current: complete it (with a conclusion), defer or "
            f"block it (with a reason) before {before}.",
            current=state_view(frame.position),
        )
    return layer, focus


def _focus_on(layer: AgendaLayer, item: AgendaItem) -> None:
    item.state = AgendaItem.CURRENT
    item.save(update_fields=["state"])
    layer.focus_item = item
    layer.save(update_fields=["focus_item"])


def _revisit(frame: Frame, item_number: Any) -> dict[str, Any]:
    """Take a deferred or blocked item of the deepest list up again, to conclude it now."""
    layer, focus = _leave_focus(frame, "revisiting another item")
    if item_number is None:
        raise invalid(
            "item_number", "revisit needs the number of a deferred or blocked item of this list."
        )
    item = _target(frame, item_number)
    if item.state not in (AgendaItem.DEFERRED, AgendaItem.BLOCKED):
        raise order_error(
            f"Item {item.path} is {item.state}; revisit takes up a deferred or blocked item "
            "(revise changes a completed item's conclusion).",
            current=state_view(frame.position),
        )
    was = item.state
    _focus_on(layer, item)
    return {"from": focus.path if focus else None, "to": item.path, "was": was}


def _next(frame: Frame) -> dict[str, Any]:
    layer, focus = _leave_focus(frame, "moving on")
    item = next_open(layer)
    if item is None:
        finish = (
            "agenda_control action=finish"
            if layer.kind == AgendaLayer.ROOT
            else f"agenda_return to close this {layer.kind} list"
        )
        raise order_error(
            f"No open item is left in this list; call {finish}.",
            current=state_view(frame.position),
        )
    _focus_on(layer, item)
    return {"from": focus.path if focus else None, "to": item.path}


def step(
    scope: Scope,
    *,
    agenda_id: Any,
    cursor_token: Any,
    action: Any,
    text: Any = None,
    item_number: Any = None,
) -> dict[str, Any]:
    if action not in ACTIONS:
        raise invalid("action", f"{action!r} is not one of {list(ACTIONS)}.")
    if action in NO_TEXT:
        if text is not None:
            raise invalid("text", f"{action} takes no text; record conclusions with complete.")
        statement = ""
    else:
        statement = inputs.statement(text, "text", WHAT[action])
    if item_number is not None and action not in TAKES_NUMBER:
        raise invalid(
            "item_number",
            "only revise and revisit take item_number; others act on the current item.",
        )

    def apply(frame: Frame) -> dict[str, Any]:
        if action == "next":
            return _next(frame)
        if action == "revisit":
            return _revisit(frame, item_number)
        if action == "revise":
            return _revise(frame, statement, item_number)
        return _resolve(frame, action, statement)

    position = mutate(
        scope,
        agenda_id=agenda_id,
        cursor_token=cursor_token,
        kind={"next": "advanced", "revisit": "revisited"}.get(action, action),
        apply=apply,
    )
    return state_view(position)
