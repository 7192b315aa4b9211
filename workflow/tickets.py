"""Issuing and checking review tickets: scoped to workspace and actor, fresh for 15 minutes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from records import validation as v
from records.errors import NOT_FOUND, AnchorError, invalid, not_found
from records.ids import is_valid_id
from records.services import workspace_ensure
from workflow.models import ReviewTicket
from workflow.scope import Scope

TICKET_LIFETIME = timedelta(minutes=15)
MAX_REVIEW_IDS = 12


def issue_tickets(
    scope: Scope,
    kind: str,
    reviews: list[tuple[dict[str, Any], dict[str, Any], dict[str, int]]],
    *,
    workspace_exists: bool = False,
) -> list[ReviewTicket]:
    """A ticket for each (request, answer, counters) review, all in one INSERT.
    `workspace_exists`: the caller has just read a row of the workspace, so the workspace need
    not be ensured."""
    if not reviews:
        return []
    if not workspace_exists:
        workspace_ensure(scope.workspace_id)
    now = timezone.now()
    return ReviewTicket.objects.bulk_create(
        [
            ReviewTicket(
                workspace_id=scope.workspace_id,
                actor_id=scope.actor_id,
                kind=kind,
                request=request,
                answer=answer,
                counters=counters,
                created_at=now,
                expires_at=now + TICKET_LIFETIME,
            )
            for request, answer, counters in reviews
        ]
    )


def parse_review_ids(value: Any) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_REVIEW_IDS:
        raise invalid(
            "review_ids",
            f"must list 1-{MAX_REVIEW_IDS} discovery_id/resolution_id values from "
            "discover_collections or resolve_record.",
        )
    for index, item in enumerate(value):
        if not is_valid_id(item):
            raise invalid(f"review_ids[{index}]", f"{item!r} is not a review ID.")
    return list(dict.fromkeys(value))


def load_tickets(scope: Scope, review_ids: list[str]) -> list[ReviewTicket]:
    """The cited tickets, in order. Another workspace's or actor's ticket does not exist here."""
    found = {
        t.pk: t
        for t in ReviewTicket.objects.filter(
            pk__in=review_ids, workspace_id=scope.workspace_id, actor_id=scope.actor_id
        )
    }
    missing = [r for r in review_ids if r not in found]
    if missing:
        first, field = missing[0], f"review_ids[{review_ids.index(missing[0])}]"
        if ReviewTicket.objects.filter(pk=first, workspace_id=scope.workspace_id).exists():
            raise another_actors("review", first, field)
        raise not_found("review", first, field)
    return [found[r] for r in review_ids]


def another_actors(kind: str, identifier: str, field: str) -> AnchorError:
    """A review or action of this workspace made by another actor: it exists, but not for you."""
    return AnchorError(
        NOT_FOUND,
        f"{field}: the {kind} with ID {identifier!r} belongs to another actor in this "
        f"workspace; each actor cites and commits only its own. Make the {kind} yourself.",
        id=identifier,
        field=field,
        reason="another_actor",
    )


def ticket_evidence(ticket: ReviewTicket) -> dict[str, Any]:
    """What an audit event keeps of a cited review."""
    answer = ticket.answer
    confirmed = {"user_confirmed_in_client": ticket.client_confirmation}
    return {
        **(confirmed if ticket.client_confirmation else {}),
        "review_id": ticket.pk,
        "kind": ticket.kind,
        "request": ticket.request,
        "status": answer.get("status"),
        "selected_record_id": answer.get("selected_record_id"),
        "candidate_ids": [c["record_id"] for c in answer.get("candidates", [])]
        or [c["collection_id"] for c in answer.get("suggestions", [])],
        "created_at": ticket.created_at.isoformat(),
    }


def clarification_text(value: Any) -> str:
    if value is None:
        return ""
    return v.description(value, "clarification", allow_blank=True)
