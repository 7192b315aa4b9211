"""The agenda's event log, each event sealing the state it produced in a hash chain, and the
health check that finds an edit made outside the tools as a broken seal or chain (it changes
nothing). Each problem is a sentence; `healthy` means none. The full check re-hashes the log
from the start or the last repair (whose event records the digest of the events before it);
every command checks from the last verified event on."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import UTC
from typing import Any

from django.db.models import Count

from records.validation import canonical_json
from workflow.agendas.inputs import is_blank
from workflow.models.agendas import Agenda, AgendaConclusion, AgendaEvent, AgendaItem, AgendaLayer

OPENING_EVENTS = ("started", "layer_opened")
CONCLUDING_KINDS = ("conclusion", "revision", "synthesis")
REPAIRED = "repaired"
REPAIRED_LOG_KEY = "repaired_event_log_hash"


def _sha(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


AGENDA_FIELDS = (
    *("id", "title", "status", "revision", "cursor_nonce", "pending_presentation_id"),
    *("bound_collection_id", "sync_state", "closing_note"),
)
LAYER_FIELDS = (
    *("id", "sequence", "kind", "depth", "label", "parent_layer_id", "parent_item_id"),
    *("source_reference", "unverified_reason", "status", "focus_item_id", "outcome"),
)
ITEM_FIELDS = (
    *("id", "layer_id", "number", "text", "state", "conclusion", "reason", "awaiting_synthesis"),
    *("record_id", "record_fingerprint", "record_version", "sync_status", "revisions"),
)


def _fields(row: Any, names: tuple[str, ...], later: tuple[str, ...] = ()) -> dict[str, Any]:
    """The named fields; those added later only when set, so older seals still match."""
    document = {name: getattr(row, name) for name in names}
    return document | {name: getattr(row, name) for name in later if getattr(row, name) is not None}


def state_document(agenda: Agenda) -> dict[str, Any]:
    """Everything a mutation can change, in a stable order and shape."""
    layers = AgendaLayer.objects.filter(agenda=agenda).order_by("sequence")
    items = (
        AgendaItem.objects.filter(layer__agenda=agenda)
        .annotate(revisions=Count("conclusions"))
        .order_by("layer__sequence", "number")
    )
    return {
        "agenda": _fields(agenda, AGENDA_FIELDS),
        "layers": [_fields(layer, LAYER_FIELDS) for layer in layers],
        "items": [_fields(item, ITEM_FIELDS, later=("earlier",)) for item in items],
    }


def state_hash(agenda: Agenda) -> str:
    return _sha(state_document(agenda))


EVENT_FIELDS = ("previous_hash", "sequence", "kind", "actor_id", "created_at", "payload")
# The log's digest lists each event's fields in this order.
LOG_FIELDS = (
    *("sequence", "kind", "actor_id", "created_at", "payload"),
    *("state_hash", "previous_hash", "event_hash"),
)


def _event(event: AgendaEvent, names: tuple[str, ...]) -> dict[str, Any]:
    created_at = event.created_at.astimezone(UTC).isoformat(timespec="microseconds")
    return {**_fields(event, names), "created_at": created_at}


def event_hash(event: AgendaEvent) -> str:
    return _sha(_event(event, (*EVENT_FIELDS, "state_hash")))


def log_hash(events: list[AgendaEvent]) -> str:
    """One digest of every stored event, as stored: any edit, removal or addition moves it,
    even where the chain itself is broken and the last event's hash no longer covers the rest."""
    return _sha([list(_event(e, LOG_FIELDS).values()) for e in events])


def _check_rows(
    agenda: Agenda, layers: list[AgendaLayer], events: list[AgendaEvent], problems: list[str]
) -> None:
    """The stack of lists, and each list's items against its frozen snapshot and history."""
    roots = [layer for layer in layers if layer.kind == AgendaLayer.ROOT]
    if len(roots) != 1 or roots[0].depth != 0 or roots[0].parent_layer_id:
        problems.append(f"structure: expected one root list at depth 0, found {len(roots)}.")
    by_id = {layer.pk: layer for layer in layers}
    for layer in layers:
        if layer.kind == AgendaLayer.ROOT:
            continue
        parent = by_id.get(layer.parent_layer_id or "")
        if parent is None or layer.depth != parent.depth + 1:
            problems.append(f"list {layer.label}: its parent list or depth is wrong.")
    active = sorted((x for x in layers if x.status == AgendaLayer.ACTIVE), key=lambda x: x.depth)
    if agenda.is_closed and active:
        problems.append(f"structure: the agenda is {agenda.status} but lists are still active.")
    if not agenda.is_closed:
        if not active or active[0].kind != AgendaLayer.ROOT:
            problems.append("structure: an open agenda needs its root list active.")
        for below, above in zip(active, active[1:], strict=False):
            if above.parent_layer_id != below.pk:
                below_name = below.label or "root"
                problems.append(f"structure: active list {above.label} is not on {below_name}.")
    items: dict[str, list[AgendaItem]] = defaultdict(list)
    for item in AgendaItem.objects.filter(layer__agenda=agenda).order_by("number"):
        items[item.layer_id].append(item)
    snapshots = {
        e.payload.get("layer_id"): e.payload.get("items")
        for e in events
        if e.kind in OPENING_EVENTS
    }
    # Item -> text of its latest conclusion, revision or synthesis.
    latest = dict(
        AgendaConclusion.objects.filter(item__layer__agenda=agenda, kind__in=CONCLUDING_KINDS)
        .order_by("item_id", "sequence")
        .values_list("item_id", "text")
    )
    closed_children = {
        layer.parent_item_id
        for layer in layers
        if layer.kind == AgendaLayer.CHILD and layer.status == AgendaLayer.CLOSED
    }
    for layer in layers:
        name = f"list {layer.label.rstrip('.') or 'root'}"
        rows = items[layer.pk]
        if [i.number for i in rows] != list(range(1, len(rows) + 1)):
            problems.append(f"{name}: item numbers are not 1..{len(rows)}.")
        if snapshots.get(layer.pk) != [i.text for i in rows]:
            problems.append(
                f"{name}: items differ from the frozen snapshot (added, dropped, reordered or "
                "reworded)."
            )
        current = [i for i in rows if i.state == AgendaItem.CURRENT]
        if len(current) > 1 or (current and current[0].pk != layer.focus_item_id):
            problems.append(f"{name}: more than one current item, or it is not the focus.")
        if layer.focus_item_id and layer.focus_item_id not in {i.pk for i in rows}:
            problems.append(f"{name}: its focus item belongs to another list.")
        # Abandoning closes every list where it stood; only a return needs all items resolved.
        returned = layer.status == AgendaLayer.CLOSED and layer.kind != AgendaLayer.ROOT
        returned = returned and agenda.status != Agenda.ABANDONED
        if returned and any(i.state not in AgendaItem.RESOLVED for i in rows):
            problems.append(f"{name}: closed with unresolved items.")
        for item in rows:
            label = f"item {layer.label}{item.number}"
            if item.state == AgendaItem.COMPLETED and is_blank(item.conclusion):
                problems.append(f"{label}: completed without a conclusion.")
            if item.state in (AgendaItem.DEFERRED, AgendaItem.BLOCKED) and is_blank(item.reason):
                problems.append(f"{label}: {item.state} without a reason.")
            if item.conclusion != latest.get(item.pk, ""):
                problems.append(f"{label}: its conclusion is not its latest recorded revision.")
            if item.awaiting_synthesis and item.pk not in closed_children:
                problems.append(f"{label}: awaits a synthesis but no child list returned.")


def check_health(agenda: Agenda, *, from_head: bool = False) -> dict[str, Any]:
    """The full check: every event re-hashed from the start (or the last repair). from_head,
    run by every command, re-hashes only the events from the verified head on (each command
    sets Agenda.verified_sequence to the event it sealed); an edit at or before the head clears
    it (triggers, workflow migration 0011), so the next command checks the whole log. A problem
    found from the head is handed to the full check, which decides and reports."""
    chain: list[str] = []  # the event log and its seal: what a repair can re-seal
    structure: list[str] = []  # the agenda's own rows: no repair makes these right
    head = agenda.verified_sequence if from_head else 0
    events = list(
        AgendaEvent.objects.filter(agenda=agenda, sequence__gte=head).order_by("sequence")
    )
    linked, openings = events, events
    if head:
        start = events[0] if events else None
        if start is None or (start.sequence, start.event_hash) != (head, agenda.verified_hash):
            chain.append(f"event #{head}: changed or removed since it was verified.")
        previous, first = (start.previous_hash, start.sequence) if start else ("", 1)
        openings = list(AgendaEvent.objects.filter(agenda=agenda, kind__in=OPENING_EVENTS))
    else:
        # From the last repair on; the history before it must be as the repair recorded it.
        last = max((i for i, e in enumerate(events) if e.kind == REPAIRED), default=0)
        if last and log_hash(events[:last]) != events[last].payload.get(REPAIRED_LOG_KEY):
            chain.append(
                f"event log: events before the repair at #{events[last].sequence} changed after it."
            )
        previous, first = (events[last - 1].event_hash, events[last].sequence) if last else ("", 1)
        linked = events[last:]
    for expected, event in enumerate(linked, start=first):
        if event.sequence != expected:
            chain.append(
                f"event log: expected event #{expected}, found #{event.sequence} (events are "
                "missing or out of order)."
            )
        if event.previous_hash != previous:
            chain.append(f"event #{event.sequence}: does not link to the event before it.")
        if event_hash(event) != event.event_hash:
            chain.append(f"event #{event.sequence} ({event.kind}): its content was altered.")
        previous = event.event_hash
    current_hash = state_hash(agenda)
    if not linked:
        chain.append("event log: empty; every agenda starts with a 'started' event.")
    elif linked[-1].sequence != agenda.revision:
        chain.append(
            f"revision {agenda.revision} does not match the last event #{linked[-1].sequence}."
        )
    if linked and linked[-1].state_hash != current_hash:
        chain.append(
            f"seal: the agenda's rows changed outside the agenda tools after event "
            f"#{linked[-1].sequence} ({linked[-1].kind})."
        )
    layers = list(AgendaLayer.objects.filter(agenda=agenda).order_by("sequence"))
    _check_rows(agenda, layers, openings, structure)
    problems = chain + structure
    return {
        "agenda_id": agenda.pk,
        "healthy": not problems,
        "problems": problems,
        "repairable": bool(chain) and not structure,
        "revision": agenda.revision,
        "event_count": len(events),
        "state_hash": current_hash,
        "event_log_hash": log_hash(events),
    }
