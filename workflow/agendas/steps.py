"""Working through the lists: start an agenda, complete, defer, block, revise, next and revisit
in the deepest list; create a list with its frozen snapshot (agenda_start, agenda_open_layer),
open a child list or an interruption on top of the stack, and return from one.

agenda_start freezes a list (given, or the titles of bound records). A record is held by another
agenda's item while that agenda is open, or closed with the item's outcome not yet synced:
binding it again is refused, naming that agenda. An earlier deferred or blocked outcome is
carried onto the new item.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import AnchorError, invalid, not_found
from records.models import Record
from records.selectors import check_active
from records.services import workspace_ensure
from workflow.agendas import inputs
from workflow.agendas.guard import RECORD_HELD, Frame, mutate, order_error, seal, synthesis_error
from workflow.agendas.lifecycle import mark_sync_pending
from workflow.agendas.presentation import (
    PICTURE_KEYS_BYTES,
    REPLY_BYTES,
    json_size,
    new_presentation_id,
    presented,
    returned_lines,
    state_view,
    with_optional,
)
from workflow.agendas.sync import AWAITING, title_fingerprint
from workflow.models.agendas import Agenda, AgendaConclusion, AgendaItem, AgendaLayer
from workflow.scope import Scope

# The actions that take text, and what it is; next and revisit take none.
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
    item = frame.position.focus if item_number is None else _target(frame, item_number)
    assert item is not None
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
    if action not in WHAT and text is not None:
        raise invalid("text", f"{action} takes no text; record conclusions with complete.")
    statement = inputs.statement(text, "text", WHAT[action]) if action in WHAT else ""
    if item_number is not None and action not in ("revise", "revisit"):
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
            earlier=earlier.get(record.pk) if earlier and record else None,
        )
        for number, (text, record) in enumerate(zip(items, bound, strict=True), start=1)
    ]
    AgendaItem.objects.bulk_create(rows)
    layer.focus_item = rows[0]
    layer.save(update_fields=["focus_item"])
    bindings = [
        {"record_id": r.record_id, "version": r.record_version, "fingerprint": r.record_fingerprint}
        for r in rows
        if r.record_id
    ]
    return with_optional(
        {
            "layer_id": layer.pk,
            "kind": kind,
            "label": label,
            "parent_item": parent_item.path if parent_item else None,
            "source_reference": source_reference,
            "unverified_source_reason": unverified_reason,
            "items": items,
        },
        {"records": bindings, "earlier": earlier},
    )


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


def _bind(scope: Scope, record_ids: list[str]) -> tuple[list[Record], dict[str, dict[str, Any]]]:
    """The records, in order, locked until the agenda is created, and per record the latest
    earlier agenda's outcome when it was deferred or blocked; refuses a record held elsewhere."""
    rows = Record.objects.select_for_update().filter(workspace_id=scope.workspace_id)
    found = rows.in_bulk(record_ids)
    records = []
    for index, record_id in enumerate(record_ids):
        record = found.get(record_id)
        if record is None:
            raise not_found("record", record_id, f"record_ids[{index}]")
        check_active(record, "binding to an agenda", field=f"record_ids[{index}]")
        records.append(record)
    if len({r.collection_id for r in records}) != 1:
        raise invalid(
            "record_ids",
            "must all belong to one collection (the agenda is bound to it); start one agenda "
            "per collection.",
        )
    latest: dict[str, AgendaItem] = {}
    for item in (
        AgendaItem.objects.filter(
            layer__agenda__workspace_id=scope.workspace_id, record_id__in=record_ids
        )
        .select_related("layer__agenda")
        .order_by("layer__agenda__created_at", "layer__agenda_id")
    ):
        assert item.record_id is not None
        other = item.layer.agenda
        unsynced = item.state in AgendaItem.RESOLVED and item.sync_status in ("", AWAITING)
        if not other.is_closed or unsynced:
            index = record_ids.index(item.record_id)
            why = f"it is {other.status}"
            if other.is_closed:
                why += f" and item {item.number}'s outcome is not synced yet"
            raise AnchorError(
                RECORD_HELD,
                f"record_ids[{index}]: record {item.record_id} is bound to item {item.number} "
                f"of agenda {other.pk} ({other.title!r}), and {why}. Finish that agenda and "
                "call agenda_sync_records on it (agenda_view shows it), or leave this record "
                "out.",
                field=f"record_ids[{index}]",
                record_id=item.record_id,
                held_by={"agenda_id": other.pk, "title": other.title, "status": other.status},
            )
        latest[item.record_id] = item  # later agendas overwrite earlier ones
    earlier = {
        record_id: {
            "state": item.state,
            "reason": item.reason,
            "agenda_id": item.layer.agenda_id,
            "agenda": item.layer.agenda.title,
        }
        for record_id, item in latest.items()
        if item.state in (AgendaItem.DEFERRED, AgendaItem.BLOCKED)
    }
    return records, earlier


def agenda_start(
    scope: Scope,
    *,
    title: Any,
    items: Any = None,
    record_ids: Any = None,
    source_reference: Any = None,
    unverified_source_reason: Any = None,
) -> dict[str, Any]:
    if isinstance(title, str) and inputs.is_blank(title):
        raise invalid(
            "title",
            "is blank: whitespace and invisible characters are not a title; name the list.",
        )
    title_text = v.title(title)
    if (items is None) == (record_ids is None):
        raise invalid(
            "items",
            "pass exactly one of items (the exact list) and record_ids (records whose titles "
            "become the items, bound for syncing outcomes back).",
        )
    reference, unverified = inputs.source(source_reference, unverified_source_reason)
    ids = inputs.record_ids(record_ids) if record_ids is not None else None
    texts = inputs.snapshot(items) if ids is None else []
    with transaction.atomic():
        # Inside the transaction: the records stay locked until this agenda holds them.
        records, earlier = _bind(scope, ids) if ids is not None else ([], {})
        texts = [r.title for r in records] if records else texts
        workspace_ensure(scope.workspace_id)
        now = timezone.now()
        agenda = Agenda.objects.create(
            workspace_id=scope.workspace_id,
            actor_id=scope.actor_id,
            title=title_text,
            pending_presentation_id=new_presentation_id(),
            bound_collection_id=records[0].collection_id if records else None,
            sync_state=Agenda.SYNC_PENDING if records else Agenda.SYNC_NOT_BOUND,
            created_at=now,
            updated_at=now,
        )
        payload = {"title": title_text, "presentation_id": agenda.pending_presentation_id}
        payload |= create_layer(
            agenda,
            kind=AgendaLayer.ROOT,
            items=texts,
            source_reference=reference,
            unverified_reason=unverified,
            at=now,
            records=records,
            earlier=earlier,
        )
        seal(agenda, scope=scope, kind="started", payload=payload, at=now)
        return presented(agenda)
