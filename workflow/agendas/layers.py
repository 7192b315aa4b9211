"""Creating a layer with its frozen snapshot (agenda_start, agenda_open_layer), opening a child
list or an interruption on top of the stack, and returning from one."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from records.errors import invalid
from records.models import Record
from records.names import normalize_name
from workflow.agendas import inputs
from workflow.agendas.guard import Frame, mutate, order_error, synthesis_error
from workflow.agendas.presentation import (
    PICTURE_KEYS_BYTES,
    REPLY_BYTES,
    json_size,
    new_presentation_id,
    presented,
    returned_lines,
)
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.scope import Scope


def title_fingerprint(title: str) -> str:
    """Identity of a bound record's meaning: its normalised title, hashed."""
    return hashlib.sha256(normalize_name(title).encode()).hexdigest()[:32]


def create_layer(
    agenda: Agenda,
    *,
    kind: str,
    items: list[str],
    source_reference: str,
    unverified_reason: str,
    at: datetime,
    parent_item: AgendaItem | None = None,
    label: str = "",
    records: list[Record] | None = None,
    earlier: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Create the layer (on the list of parent_item) and its numbered items, the first one
    current; return the event payload part."""
    parent_layer = parent_item.layer if parent_item else None
    layer = AgendaLayer.objects.create(
        agenda=agenda,
        sequence=AgendaLayer.objects.filter(agenda=agenda).count() + 1,
        kind=kind,
        depth=parent_layer.depth + 1 if parent_layer else 0,
        label=label,
        parent_layer=parent_layer,
        parent_item=parent_item,
        source_reference=source_reference,
        unverified_reason=unverified_reason,
        opened_at=at,
    )
    earlier = earlier or {}
    bound: list[Record | None] = list(records) if records else [None] * len(items)
    rows = [
        AgendaItem(
            layer=layer,
            number=number,
            text=text,
            state=AgendaItem.CURRENT if number == 1 else AgendaItem.OPEN,
            record=record,
            record_fingerprint=title_fingerprint(record.title) if record else "",
            record_version=record.version if record else None,
            earlier=earlier.get(record.pk) if record else None,
        )
        for number, (text, record) in enumerate(zip(items, bound, strict=True), start=1)
    ]
    AgendaItem.objects.bulk_create(rows)
    layer.focus_item = rows[0]
    layer.save(update_fields=["focus_item"])
    payload: dict[str, Any] = {
        "layer_id": layer.pk,
        "kind": kind,
        "label": label,
        "parent_item": parent_item.path if parent_item else None,
        "source_reference": source_reference,
        "unverified_source_reason": unverified_reason,
        "items": items,
    }
    if records:
        payload["records"] = [
            {"record_id": r.pk, "version": r.version, "fingerprint": title_fingerprint(r.title)}
            for r in records
        ]
    if earlier:
        payload["earlier"] = earlier
    return payload


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
            raise order_error(f"Lists nest at most {MAX_DEPTH} deep; finish this one first.")
        if focus.awaiting_synthesis:
            raise synthesis_error(focus)
        if kind == AgendaLayer.CHILD:
            if focus.state not in (AgendaItem.CURRENT, AgendaItem.COMPLETED):
                raise order_error(
                    f"A child list opens from the current item; item {focus.path} is "
                    f"{focus.state}. Take the item with agenda_step action=next first."
                )
            label = f"{focus.path}."
        else:
            count = AgendaLayer.objects.filter(
                agenda=frame.agenda, kind=AgendaLayer.INTERRUPTION
            ).count()
            label = f"i{count + 1}."
        payload = create_layer(
            frame.agenda,
            kind=kind,
            items=texts,
            source_reference=reference,
            unverified_reason=unverified,
            at=frame.now,
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
                "agenda_control action=finish."
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
        returned.update({"list": layer.label.rstrip("."), "kind": layer.kind, "outcome": summary})
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
    budget = REPLY_BYTES - json_size(result) - json_size(returned) - PICTURE_KEYS_BYTES
    returned.update(returned_lines(returned["list"], items, budget))
    return {**result, "returned_from": returned}
