"""Trust state of agent-reported clarifications: a person confirms or disputes what the agent said.

The server cannot verify a clarification the agent reports, so a person's verdict is kept next to
the (append-only) audit event. Reads (`clarification_reviews_for`) are for history and context
tools; the write (`clarification_review_create`) is for the admin, and is itself audited.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import invalid, not_found
from records.models import AuditEvent, ClarificationReview
from records.services import WriteContext

STATES = {ClarificationReview.CONFIRMED, ClarificationReview.DISPUTED}


class ClarificationVerdict(TypedDict):
    state: str
    reviewer_id: str
    note: str
    reviewed_at: str
    review_count: int


def clarification_reviews_for(
    event_ids: Iterable[int], *, workspace_id: str | None = None
) -> dict[int, ClarificationVerdict]:
    """The standing verdict per audit event id (latest review wins); events never reviewed are
    absent. One query whatever the number of events, so history pages can call it per page."""
    ids = {int(event_id) for event_id in event_ids}
    if not ids:
        return {}
    reviews = ClarificationReview.objects.filter(audit_event_id__in=ids)
    if workspace_id is not None:
        reviews = reviews.filter(workspace_id=workspace_id)
    verdicts: dict[int, ClarificationVerdict] = {}
    for review in reviews.order_by("audit_event_id", "-created_at", "-id"):
        standing = verdicts.get(review.audit_event_id)
        if standing is not None:
            standing["review_count"] += 1
            continue
        verdicts[review.audit_event_id] = ClarificationVerdict(
            state=review.state,
            reviewer_id=review.reviewer_id,
            note=review.note,
            reviewed_at=review.created_at.isoformat(),
            review_count=1,
        )
    return verdicts


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
        event = AuditEvent.objects.filter(workspace_id=ctx.workspace_id, pk=event_pk).first()
        if event is None:
            raise not_found("audit event", event_pk)
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
        AuditEvent.objects.create(
            workspace_id=ctx.workspace_id,
            actor_id=ctx.actor_id,
            kind=f"clarification.{state}",
            entity_type="audit_event",
            entity_id=str(event.pk),
            record_id=event.record_id,
            collection_id=event.collection_id,
            before=None,
            after={
                "audit_event_id": event.pk,
                "state": state,
                "note": note_text,
                "clarification": event.agent_reported_clarification,
            },
            decision_reason=ctx.decision_reason,
            created_at=now,
        )
        return review
