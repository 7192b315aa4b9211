"""agenda_start: freeze a list (given, or the titles of bound records) as a new agenda.

A record is held by another agenda's item while that agenda is open, or closed with the item's
outcome not yet synced: binding it again is refused, naming that agenda. An earlier deferred or
blocked outcome is carried onto the new item.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import AnchorError, invalid, not_found
from records.models import Record
from records.selectors import check_active
from records.services import workspace_ensure
from workflow.agendas import inputs
from workflow.agendas.guard import RECORD_HELD, seal
from workflow.agendas.presentation import new_presentation_id, presented
from workflow.agendas.steps import create_layer
from workflow.agendas.sync import AWAITING
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.scope import Scope


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
