"""Relationships: typed links between two records of one workspace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from records import validation as v
from records.errors import invalid
from records.models import AuditEvent, Record, Relationship
from records.selectors.scoped import check_active, in_workspace
from records.selectors.serialize import relationship_dict
from records.services.audit_trail import WriteContext, audit, audit_event
from records.services.record_changes import lock_record, lock_records


def relationship_create(
    *, ctx: WriteContext, source_id: Any, relationship_type: Any, target_id: Any
) -> tuple[Relationship, bool]:
    """Link two records. Linking an existing link again is a no-op that returns it."""
    rel_type = v.relationship_type(relationship_type)
    with transaction.atomic():
        lock_records(ctx, [source_id, target_id])
        source = lock_record(ctx, source_id, "source_id")
        target = lock_record(ctx, target_id, "target_id")
        if source.pk == target.pk:
            raise invalid("target_id", "a record cannot be linked to itself.")
        same = Relationship.objects.filter(source=source, relationship_type=rel_type, target=target)
        existing = same.first()
        if existing is not None:
            return existing, False
        check_active(source, "linking")
        check_active(target, "linking")
        rel, event = new_link(ctx, source, rel_type, target, timezone.now())
        try:
            with transaction.atomic():
                rel.save(force_insert=True)
        except IntegrityError:  # a concurrent writer linked the same pair first
            return same.get(), False
        event.save(force_insert=True)
        return rel, True


def new_link(
    ctx: WriteContext, source: Record, relationship_type: str, target: Record, at: datetime
) -> tuple[Relationship, AuditEvent]:
    """A link of a checked type between two records and its creation event, not yet saved:
    relationship_create saves one, bulk writers many."""
    rel = Relationship(
        workspace_id=ctx.workspace_id,
        source=source,
        relationship_type=relationship_type,
        target=target,
        created_by=ctx.actor_id,
        created_at=at,
    )
    event = audit_event(
        ctx,
        kind="relationship.created",
        entity_type="relationship",
        entity_id=rel.pk,
        record_id=source.pk,
        collection_id=source.collection_id,
        after={**relationship_dict(rel), "target_title": target.title},
        at=at,
    )
    return rel, event


def relationship_delete(*, ctx: WriteContext, relationship_id: Any) -> dict[str, Any]:
    """Remove a link (also between archived records, so wrong links can always be corrected)."""
    relationship_id = v.entity_id(relationship_id, "relationship_id")
    with transaction.atomic():
        rel = in_workspace(
            Relationship.objects.select_for_update().select_related("source", "target"),
            workspace_id=ctx.workspace_id,
            pk=relationship_id,
            kind="relationship",
        )
        state = {**relationship_dict(rel), "target_title": rel.target.title}
        rel.delete()
        audit(
            ctx,
            kind="relationship.deleted",
            entity_type="relationship",
            entity_id=relationship_id,
            record_id=state["source_id"],
            collection_id=rel.source.collection_id,
            before=state,
        )
        return state
