"""A person's standing verdict on agent-reported clarifications, shown beside the event."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from records.models import ClarificationReview


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
