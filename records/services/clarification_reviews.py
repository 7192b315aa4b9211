"""A person's verdict on an agent-reported clarification: confirmed or disputed, and audited.

Kept next to the append-only audit event it judges; reads are records.selectors'."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import invalid
from records.models import AuditEvent, ClarificationReview
from records.selectors.scoped import in_workspace
from records.services.audit_trail import WriteContext, audit

STATES = {ClarificationReview.CONFIRMED, ClarificationReview.DISPUTED}


def clarification_review_create(
    *, ctx: WriteContext, event_id: Any, state: Any, note: Any = ""
) -> ClarificationReview:
    """Record a person's verdict on one event's clarification, audited in the same transaction."""
    if state not in STATES:
        raise invalid("state", f"must be one of {sorted(STATES)}, got {state!r}.")
    note_text = v.description(note or "", "note", allow_blank=True)
    try:
        event_pk = int(event_id)
    except (TypeError, ValueError):
        raise invalid("event_id", f"must be an audit event number, got {event_id!r}.") from None
    with transaction.atomic():
        event = in_workspace(
            AuditEvent.objects, workspace_id=ctx.workspace_id, pk=event_pk, kind="audit event"
        )
        if not event.agent_reported_clarification.strip():
            raise invalid(
                "event_id",
                f"audit event {event_pk} carries no agent-reported clarification to review.",
            )
        now = timezone.now()
        review = ClarificationReview.objects.create(
            workspace_id=ctx.workspace_id,
            audit_event=event,
            state=state,
            reviewer_id=ctx.actor_id,
            note=note_text,
            created_at=now,
        )
        audit(
            ctx,
            kind=f"clarification.{state}",
            entity_type="audit_event",
            entity_id=str(event.pk),
            record_id=event.record_id,
            collection_id=event.collection_id,
            after={
                "audit_event_id": event.pk,
                "state": state,
                "note": note_text,
                "clarification": event.agent_reported_clarification,
            },
            at=now,
        )
        return review
