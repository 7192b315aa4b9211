"""Creating a layer with its frozen snapshot; shared by agenda_start and agenda_open_layer."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from records.models import Record
from records.names import normalize_name
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer


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
    parent_layer: AgendaLayer | None = None,
    parent_item: AgendaItem | None = None,
    label: str = "",
    records: list[Record] | None = None,
    earlier: dict[str, dict[str, Any]] | None = None,
) -> tuple[AgendaLayer, dict[str, Any]]:
    """The layer, its numbered items (the first one current), and the event payload part."""
    sequence = AgendaLayer.objects.filter(agenda=agenda).count() + 1
    layer = AgendaLayer.objects.create(
        agenda=agenda,
        sequence=sequence,
        kind=kind,
        depth=parent_layer.depth + 1 if parent_layer else 0,
        label=label,
        parent_layer=parent_layer,
        parent_item=parent_item,
        source_reference=source_reference,
        unverified_reason=unverified_reason,
        opened_at=at,
    )
    rows = []
    for number, text in enumerate(items, start=1):
        record = records[number - 1] if records else None
        rows.append(
            AgendaItem(
                layer=layer,
                number=number,
                text=text,
                state=AgendaItem.CURRENT if number == 1 else AgendaItem.OPEN,
                record=record,
                record_fingerprint=title_fingerprint(record.title) if record else "",
                record_version=record.version if record else None,
                earlier=(earlier or {}).get(record.pk) if record else None,
            )
        )
    AgendaItem.objects.bulk_create(rows)
    layer.focus_item = AgendaItem.objects.get(layer=layer, number=1)
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
        carried = {r.pk: (earlier or {})[r.pk] for r in records if r.pk in (earlier or {})}
        if carried:
            payload["earlier"] = carried
    return layer, payload
