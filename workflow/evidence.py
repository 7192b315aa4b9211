"""What the cited reviews must show before a write may be prepared or committed.

Each rule raises REVIEW_REQUIRED (no fitting review cited), INCOMPLETE_REVIEW (the review could
not scan everything) or NEEDS_CLARIFICATION (the review found something that only an actual
user statement can settle: reported by the agent in `clarification`, or confirmed by the user in
the client's own dialog and stored on the review, `workflow.client_confirmation`).
"""

from __future__ import annotations

from typing import Any

from records.errors import (
    INCOMPLETE_REVIEW,
    NEEDS_CLARIFICATION,
    REVIEW_REQUIRED,
    AnchorError,
)
from records.names import normalize_name
from workflow.models import ReviewTicket


def _of_kind(tickets: list[ReviewTicket], kind: str) -> list[ReviewTicket]:
    return [t for t in tickets if t.kind == kind]


def require_clarification(clarification: str, why: str, **details: Any) -> None:
    if not clarification.strip():
        raise AnchorError(
            NEEDS_CLARIFICATION,
            f"{why} Ask the user, then prepare again with `clarification` summarising what they "
            "actually said (it is recorded as agent-reported, not as consent), or resolve_record "
            "again with ask_user: true to ask them in the client's own dialog and cite that "
            "resolution_id.",
            **details,
        )


def record_reviewed(
    tickets: list[ReviewTicket], record_id: str, clarification: str, field: str
) -> None:
    """record_id must come from a cited resolution; only a `resolved` selection needs no more."""
    citing = [
        t
        for t in _of_kind(tickets, ReviewTicket.RESOLUTION)
        if any(c["record_id"] == record_id for c in t.answer.get("candidates", []))
    ]
    if not citing:
        raise AnchorError(
            REVIEW_REQUIRED,
            f"{field}: record {record_id} is not a candidate of any cited resolution. Call "
            "resolve_record for it (by name or ID) and cite that resolution_id in review_ids.",
            field=field,
            record_id=record_id,
        )
    if any(t.answer.get("selected_record_id") == record_id for t in citing):
        return
    if any((t.client_confirmation or {}).get("record_id") == record_id for t in citing):
        return  # the user picked it in the client's dialog
    if all(t.answer.get("status") == "incomplete" for t in citing):
        raise AnchorError(
            INCOMPLETE_REVIEW,
            f"{field}: the resolutions citing record {record_id} were incomplete; narrow the "
            "query (collection_id, context_record_ids) and resolve again.",
            field=field,
        )
    require_clarification(
        clarification,
        f"{field}: record {record_id} was a candidate but not the selected match of the cited "
        "resolution (ambiguous, archived or only similar).",
        field=field,
        record_id=record_id,
    )


def title_reviewed(
    tickets: list[ReviewTicket],
    *,
    title: str,
    collection_id: str,
    clarification: str,
    ignore_record_id: str | None = None,
) -> None:
    """A new or changed title needs a whole-collection resolution of exactly that title."""
    normalized = normalize_name(title)
    fitting = [
        t
        for t in _of_kind(tickets, ReviewTicket.RESOLUTION)
        if t.request.get("normalized_query") == normalized
        and t.request.get("collection_id") == collection_id
        and not t.request.get("context_record_ids")
    ]
    if not fitting:
        raise AnchorError(
            REVIEW_REQUIRED,
            f"title: resolve the proposed title {title!r} in the whole target collection first: "
            f"resolve_record(query={title!r}, collection_id={collection_id!r}) without "
            "context_record_ids, then cite its resolution_id.",
            field="title",
        )
    ticket = fitting[0]
    if ticket.answer.get("status") == "incomplete":
        raise AnchorError(
            INCOMPLETE_REVIEW,
            "title: the cited resolution was incomplete, so possible duplicates were not all "
            "checked. Narrow nothing here: a duplicate check must cover the whole collection.",
            field="title",
        )
    others = [c for c in ticket.answer.get("candidates", []) if c["record_id"] != ignore_record_id]
    # The user may have said in the client's dialog that they mean none of them: a new one.
    if others and not (ticket.client_confirmation or {}).get("different"):
        require_clarification(
            clarification,
            f"title: {len(others)} existing record(s) in the collection have the same or a "
            f"similar name ({', '.join(repr(c['title']) for c in others[:5])}). Confirm this is "
            "a different one.",
            field="title",
            candidates=[c["record_id"] for c in others],
        )


def discovery_for_name(
    tickets: list[ReviewTicket], *, name: str, purpose: str | None, field: str = "name"
) -> ReviewTicket:
    """The cited discovery of exactly this proposed name (and purpose, when given)."""
    normalized = normalize_name(name)
    for ticket in _of_kind(tickets, ReviewTicket.DISCOVERY):
        if ticket.request.get("normalized_name") != normalized:
            continue
        if purpose is not None and ticket.request.get("purpose") != purpose:
            continue
        if ticket.answer.get("status") == "incomplete":
            raise AnchorError(
                INCOMPLETE_REVIEW,
                "The cited discovery could not list the whole catalog, so overlap was not "
                "fully checked.",
            )
        return ticket
    purpose_shown = "..." if purpose is None else "<exactly the new purpose>"
    raise AnchorError(
        REVIEW_REQUIRED,
        f"{field}: call discover_collections(name={name!r}, purpose={purpose_shown}) with "
        f"exactly the proposed {field}{'' if purpose is None else ' and purpose'}, read the "
        "whole catalog, and cite its discovery_id.",
        field=field,
    )


def collection_in_discovery(tickets: list[ReviewTicket], collection_id: str) -> None:
    for ticket in _of_kind(tickets, ReviewTicket.DISCOVERY):
        if collection_id in ticket.answer.get("catalog_ids", []):
            return
    raise AnchorError(
        REVIEW_REQUIRED,
        f"collection_id: cite a discovery_id from discover_collections whose catalog includes "
        f"collection {collection_id}.",
        field="collection_id",
    )
