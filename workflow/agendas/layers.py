"""Opening a child list or an interruption on top of the stack, and returning from one."""

from __future__ import annotations

from typing import Any

from records.errors import AnchorError, invalid
from workflow.agendas import inputs
from workflow.agendas.errors import SYNTHESIS_REQUIRED, order_error
from workflow.agendas.guard import Frame, mutate
from workflow.agendas.layers_create import create_layer
from workflow.agendas.lifecycle import PICTURE_KEYS_BYTES, presented
from workflow.agendas.picture import REPLY_BYTES, json_size, returned_lines
from workflow.agendas.presentation import state_view
from workflow.agendas.tokens import new_presentation_id
from workflow.models.agendas import AgendaItem, AgendaLayer
from workflow.scope import Scope

KINDS = (AgendaLayer.CHILD, AgendaLayer.INTERRUPTION)
MAX_DEPTH = 8
# Kept free of the picture for the returned list's lines: at least a few of them show.
RETURNED_MIN_BYTES = 1_500


def open_layer(
    scope: Scope,
    *,
    agenda_id: Any,
    cursor_token: Any,
    kind: Any,
    items: Any,
    source_reference: Any = None,
    unverified_source_reason: Any = None,
) -> dict[str, Any]:
    if kind not in KINDS:
        raise invalid("kind", f"{kind!r} is not one of {list(KINDS)}.")
    texts = inputs.snapshot(items)
    reference, unverified = inputs.source(source_reference, unverified_source_reason)

    def apply(frame: Frame) -> dict[str, Any]:
        parent_layer, focus = frame.position.deepest, frame.position.focus
        assert parent_layer is not None and focus is not None
        if parent_layer.depth + 1 >= MAX_DEPTH:
            raise order_error(
                f"Lists nest at most {MAX_DEPTH} deep; finish this one first.",
                current=state_view(frame.position),
            )
        if focus.awaiting_synthesis:
            raise AnchorError(
                SYNTHESIS_REQUIRED,
                f"Item {focus.path} awaits the synthesis of its last child list: agenda_step "
                "action=revise first.",
                current=state_view(frame.position),
            )
        if kind == AgendaLayer.CHILD:
            if focus.state not in (AgendaItem.CURRENT, AgendaItem.COMPLETED):
                raise order_error(
                    f"A child list opens from the current item; item {focus.path} is "
                    f"{focus.state}. Take the item with agenda_step action=next first.",
                    current=state_view(frame.position),
                )
            label = f"{focus.path}."
        else:
            count = AgendaLayer.objects.filter(
                agenda=frame.agenda, kind=AgendaLayer.INTERRUPTION
            ).count()
            label = f"i{count + 1}."
        _, payload = create_layer(
            frame.agenda,
            kind=kind,
            items=texts,
            source_reference=reference,
            unverified_reason=unverified,
            at=frame.now,
            parent_layer=parent_layer,
            parent_item=focus,
            label=label,
        )
        frame.agenda.pending_presentation_id = new_presentation_id()
        return {**payload, "presentation_id": frame.agenda.pending_presentation_id}

    position = mutate(
        scope, agenda_id=agenda_id, cursor_token=cursor_token, kind="layer_opened", apply=apply
    )
    return presented(position.agenda)


def return_layer(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, outcome: Any
) -> dict[str, Any]:
    summary = inputs.statement(outcome, "outcome", "The list's outcome")
    returned: dict[str, Any] = {}
    items: list[AgendaItem] = []

    def apply(frame: Frame) -> dict[str, Any]:
        layer = frame.position.deepest
        assert layer is not None
        if layer.kind == AgendaLayer.ROOT:
            raise order_error(
                "The root list has no parent to return to; finish the agenda with "
                "agenda_control action=finish.",
                current=state_view(frame.position),
            )
        items.extend(layer.items.order_by("number"))
        for item in items:
            item.layer = layer
        pending = [item.path for item in items if item.state not in AgendaItem.RESOLVED]
        if pending:
            raise order_error(
                f"Items {', '.join(pending)} of this list are not resolved; complete, defer or "
                "block each before returning.",
                unresolved=pending,
                current=state_view(frame.position),
            )
        layer.status = AgendaLayer.CLOSED
        layer.outcome = summary
        layer.closed_at = frame.now
        layer.save(update_fields=["status", "outcome", "closed_at"])
        parent = layer.parent_item
        assert parent is not None
        if layer.kind == AgendaLayer.CHILD:
            parent.awaiting_synthesis = True
            parent.save(update_fields=["awaiting_synthesis"])
        frame.agenda.pending_presentation_id = new_presentation_id()
        returned.update(
            {
                "layer_id": layer.pk,
                "list": layer.label.rstrip("."),
                "kind": layer.kind,
                "outcome": summary,
            }
        )
        return {
            "layer_id": layer.pk,
            "outcome": summary,
            "parent_item": f"{parent.layer.label}{parent.number}",
            "presentation_id": frame.agenda.pending_presentation_id,
        }

    position = mutate(
        scope, agenda_id=agenda_id, cursor_token=cursor_token, kind="returned", apply=apply
    )
    # The picture first (the user sees it), then as many returned lines as still fit.
    result = presented(position.agenda, reserve=json_size(returned) + RETURNED_MIN_BYTES)
    layer = AgendaLayer.objects.get(pk=returned.pop("layer_id"))
    budget = REPLY_BYTES - json_size(result) - json_size(returned) - PICTURE_KEYS_BYTES
    returned.update(returned_lines(layer, items, budget))
    return {**result, "returned_from": returned}
