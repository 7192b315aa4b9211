"""agenda_start: freeze a list (given, or the titles of bound records) as a new agenda."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import invalid
from records.models import Record
from records.services import workspace_ensure
from workflow.agendas import inputs
from workflow.agendas.binding import bound_records, earlier_outcomes
from workflow.agendas.chain import append_event
from workflow.agendas.layers import create_layer
from workflow.agendas.lifecycle import presented
from workflow.agendas.presentation import new_nonce, new_presentation_id
from workflow.models.agendas import Agenda, AgendaLayer
from workflow.scope import Scope


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
        records: list[Record] | None = None
        earlier: dict[str, dict[str, Any]] = {}
        if ids is not None:
            # Inside the transaction: the records stay locked until this agenda holds them.
            records = bound_records(scope, ids)
            earlier = earlier_outcomes(scope, records)
            texts = [r.title for r in records]
        workspace_ensure(scope.workspace_id)
        now = timezone.now()
        agenda = Agenda.objects.create(
            workspace_id=scope.workspace_id,
            actor_id=scope.actor_id,
            title=title_text,
            revision=1,
            cursor_nonce=new_nonce(),
            pending_presentation_id=new_presentation_id(),
            bound_collection_id=records[0].collection_id if records else None,
            sync_state=Agenda.SYNC_PENDING if records else Agenda.SYNC_NOT_BOUND,
            created_at=now,
            updated_at=now,
        )
        _, payload = create_layer(
            agenda,
            kind=AgendaLayer.ROOT,
            items=texts,
            source_reference=reference,
            unverified_reason=unverified,
            at=now,
            records=records,
            earlier=earlier,
        )
        payload = {
            "title": title_text,
            "presentation_id": agenda.pending_presentation_id,
            **payload,
        }
        append_event(agenda, kind="started", actor_id=scope.actor_id, payload=payload, at=now)
        return presented(agenda)
