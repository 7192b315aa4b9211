"""Working through the deepest list: complete, defer, block, revise, next, revisit."""

from __future__ import annotations

from typing import Any

from records.errors import invalid
from workflow.agendas import inputs
from workflow.agendas.guard import Frame, mutate, order_error, synthesis_error
from workflow.agendas.lifecycle import mark_sync_pending
from workflow.agendas.presentation import state_view
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


def _conclude(frame: Frame, item: AgendaItem, kind: str, text: str) -> None:
    """Save the item's new outcome and add it to its history. A bound item's outcome that a
    sync wrote (or refused) must be considered again by the next sync; a write awaiting
    approval is read first and compared then."""
    AgendaConclusion.objects.create(
        item=item,
        sequence=item.conclusions.count() + 1,
        kind=kind,
        text=text,
        agenda_revision=frame.agenda.revision + 1,
        actor_id=frame.scope.actor_id,
        created_at=frame.now,
    )
    if item.record_id and item.sync_status not in ("", AWAITING):
        item.sync_status = ""
    item.save(update_fields=["state", "conclusion", "reason", "awaiting_synthesis", "sync_status"])
    mark_sync_pending(frame.agenda)


def _resolve(frame: Frame, action: str, text: str) -> dict[str, Any]:
    item = frame.position.focus
    if item is not None and item.awaiting_synthesis:
        raise synthesis_error(item)
    if item is None or item.state != AgendaItem.CURRENT:
        where = f"item {item.path} is already {item.state}" if item else "no item is current"
        raise order_error(
            f"Cannot {action}: {where}. Call agenda_step action=next to take the next open item "
            "(or action=revise to change a completed item's conclusion)."
        )
    if action == "complete":
        # A revisited item's earlier defer/block reason stays in its history, not its outcome.
        item.state, item.conclusion, item.reason = AgendaItem.COMPLETED, text, ""
        _conclude(frame, item, AgendaConclusion.CONCLUSION, text)
    else:
        item.state = AgendaItem.DEFERRED if action == "defer" else AgendaItem.BLOCKED
        item.reason = text
        _conclude(frame, item, item.state, text)
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
        _conclude(frame, item, AgendaConclusion.SYNTHESIS, text)
        kind = "synthesis"
    elif item.state == AgendaItem.COMPLETED:
        item.conclusion = text
        _conclude(frame, item, AgendaConclusion.REVISION, text)
        kind = "revision"
    else:
        raise order_error(
            f"Item {item.path} is {item.state}; revise changes the conclusion of a completed "
            "item (or records the synthesis after a child list). Use complete, defer or block "
            "for the current item."
        )
    return {"item": item.path, "state": item.state, "text": text, "kind": kind}


def _move(frame: Frame, action: str, item_number: Any) -> dict[str, Any]:
    """Leave the resolved focus of the deepest list for its next open item (next), or for one
    of its deferred or blocked items, taken up again to conclude it now (revisit)."""
    layer, focus = frame.position.deepest, frame.position.focus
    assert layer is not None
    if focus is not None and focus.awaiting_synthesis:
        raise synthesis_error(focus)
    if focus is not None and focus.state == AgendaItem.CURRENT:
        before = "moving on" if action == "next" else "revisiting another item"
        raise order_error(
            f"Item {focus.path} is still current: complete it (with a conclusion), defer or "
            f"block it (with a reason) before {before}."
        )
    moved: dict[str, Any] = {"from": focus.path if focus else None}
    if action == "next":
        item = layer.items.filter(state=AgendaItem.OPEN).order_by("number").first()
        if item is None:
            finish = (
                "agenda_control action=finish"
                if layer.kind == AgendaLayer.ROOT
                else f"agenda_return to close this {layer.kind} list"
            )
            raise order_error(f"No open item is left in this list; call {finish}.")
        item.layer = layer
        moved["to"] = item.path
    else:
        if item_number is None:
            raise invalid(
                "item_number",
                "revisit needs the number of a deferred or blocked item of this list.",
            )
        item = _target(frame, item_number)
        if item.state not in (AgendaItem.DEFERRED, AgendaItem.BLOCKED):
            raise order_error(
                f"Item {item.path} is {item.state}; revisit takes up a deferred or blocked item "
                "(revise changes a completed item's conclusion)."
            )
        moved.update({"to": item.path, "was": item.state})
    item.state = AgendaItem.CURRENT
    item.save(update_fields=["state"])
    layer.focus_item = item
    layer.save(update_fields=["focus_item"])
    return moved


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
        if action in ("next", "revisit"):
            return _move(frame, action, item_number)
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
