"""The agenda's event log: append-only, hash-chained, each event sealing the state it produced,
so an edit made outside the tools shows up in the health check as a broken seal or chain.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count

from records.validation import canonical_json
from workflow.models.agendas import Agenda, AgendaEvent, AgendaItem, AgendaLayer


def _sha(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds")


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


def _fields(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in names}


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
        "items": [_item_document(item) for item in items],
    }


def _item_document(item: AgendaItem) -> dict[str, Any]:
    document = _fields(item, ITEM_FIELDS)
    # Added later: only when set, so the seals of agendas made before it still match.
    if item.earlier is not None:
        document["earlier"] = item.earlier
    return document


def state_hash(agenda: Agenda) -> str:
    return _sha(state_document(agenda))


def event_hash(event: AgendaEvent) -> str:
    return _sha(
        {
            "previous_hash": event.previous_hash,
            "sequence": event.sequence,
            "kind": event.kind,
            "actor_id": event.actor_id,
            "created_at": _time(event.created_at),
            "payload": event.payload,
            "state_hash": event.state_hash,
        }
    )


def log_hash(events: list[AgendaEvent]) -> str:
    """One digest of every stored event, as stored: any edit, removal or addition moves it,
    even where the chain itself is broken and the last event's hash no longer covers the rest."""
    return _sha(
        [
            [
                e.sequence,
                e.kind,
                e.actor_id,
                _time(e.created_at),
                e.payload,
                e.state_hash,
                e.previous_hash,
                e.event_hash,
            ]
            for e in events
        ]
    )


def append_event(
    agenda: Agenda, *, kind: str, actor_id: str, payload: dict[str, Any], at: datetime
) -> AgendaEvent:
    """Seal the agenda's current (already saved) state as event number agenda.revision."""
    previous = (
        AgendaEvent.objects.filter(agenda=agenda).order_by("-sequence").only("event_hash").first()
    )
    event = AgendaEvent(
        agenda=agenda,
        sequence=agenda.revision,
        kind=kind,
        actor_id=actor_id,
        payload=payload,
        state_hash=state_hash(agenda),
        previous_hash=previous.event_hash if previous else "",
        created_at=at,
    )
    event.event_hash = event_hash(event)
    event.save()
    return event
