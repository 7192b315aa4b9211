"""Self mappings: which record is "me" for an actor, set by an agent and removed by a person."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from records.errors import NEEDS_CLARIFICATION, AnchorError
from records.models import SelfMapping
from records.services.audit_trail import WriteContext, audit
from records.services.record_changes import check_current, lock_record


def self_mapping_set(*, ctx: WriteContext, record_id: Any, expected_version: Any) -> SelfMapping:
    """Map "me" for this actor. An existing mapping to another record is never replaced."""
    with transaction.atomic():
        record = lock_record(ctx, record_id)
        check_current(record, expected_version, "mapping yourself to it")
        existing = SelfMapping.objects.filter(
            workspace_id=ctx.workspace_id, actor_id=ctx.actor_id
        ).first()
        if existing is not None:
            if existing.record_id == record.pk:
                return existing
            raise AnchorError(
                NEEDS_CLARIFICATION,
                f"Actor {ctx.actor_id!r} is already mapped to record {existing.record_id}; a "
                "mapping is never silently replaced. Ask a person to remove it in the admin "
                "(Self mappings), then set the new one.",
                current_record_id=existing.record_id,
            )
        now = timezone.now()
        mapping = SelfMapping.objects.create(
            workspace_id=ctx.workspace_id, actor_id=ctx.actor_id, record=record, created_at=now
        )
        audit(
            ctx,
            kind="record.self_mapped",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            after={"actor_id": ctx.actor_id, "record_id": record.pk},
            at=now,
        )
        return mapping


def self_mapping_remove(*, ctx: WriteContext, actor_id: str) -> None:
    """A person removes an actor's "me" mapping (agents cannot: they may only set one)."""
    with transaction.atomic():
        mapping = (
            SelfMapping.objects.select_for_update()
            .filter(workspace_id=ctx.workspace_id, actor_id=actor_id)
            .first()
        )
        if mapping is None:
            raise AnchorError(
                "NOT_FOUND", f"actor_id: {actor_id!r} has no self mapping.", field="actor_id"
            )
        record_id, collection_id = mapping.record_id, mapping.record.collection_id
        mapping.delete()
        audit(
            ctx,
            kind="record.self_unmapped",
            entity_type="record",
            entity_id=record_id,
            record_id=record_id,
            collection_id=collection_id,
            before={"actor_id": actor_id, "record_id": record_id},
        )
