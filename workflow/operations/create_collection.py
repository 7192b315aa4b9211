"""create_collection: a new collection, or the one of that name reused unchanged."""

from __future__ import annotations

from typing import Any

from records import services
from records.approval import NOTHING, Touched
from records.models import Collection
from records.selectors.serialize import collection_dict
from records.services import WriteContext
from workflow import evidence
from workflow.discovery import discover_collections
from workflow.models import ReviewTicket
from workflow.operations import Args, Operation
from workflow.operations.change import Change, CurrentRecords, added_fields
from workflow.operations.checks import (
    COLLECTION_ARGUMENTS,
    COLLECTION_NOTES,
    collection_called,
    collection_fields,
)
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    fields = collection_fields(args)
    ticket = evidence.discovery_for_name(tickets, name=fields.name, purpose=fields.purpose)
    if collection_called(scope.workspace_id, fields.name) is not None:
        return NOTHING  # reused unchanged; nothing to clarify
    if suggestions := ticket.answer.get("suggestions", []):
        evidence.require_clarification(
            clarification,
            "The discovery found possibly overlapping collections "
            f"({', '.join(repr(s['name']) for s in suggestions[:5])}). Reusing one is often "
            "better; a new collection needs the clarified distinction.",
            suggestions=[s["collection_id"] for s in suggestions],
        )
    return NOTHING  # a new collection is never gated yet


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    fields = collection_fields(args)
    existing = collection_called(ctx.workspace_id, fields.name)
    if existing is not None:
        state = collection_dict(existing, view="state")
        services.audit(  # nothing changed, but the decision and its evidence stay in the history
            ctx,
            kind="collection.reused",
            entity_type="collection",
            entity_id=existing.pk,
            collection_id=existing.pk,
            before=state,
            after=state,
        )
        return {
            "collection": collection_dict(existing, view="write"),
            "created": False,
            "note": "A collection with this name exists; it is returned unchanged.",
        }
    collection = services.collection_create(ctx=ctx, fields=fields)
    return {"collection": collection_dict(collection, view="write"), "created": True}


def change(args: Args, current: CurrentRecords) -> Change:
    return Change("create collection", fields=added_fields(args))


def follow_up(scope: Scope, result: dict[str, Any]) -> dict[str, Any] | None:
    """A discovery of the created (or reused) collection, so the next write can cite it."""
    collection = Collection.objects.filter(
        workspace_id=scope.workspace_id, pk=result["collection"]["collection_id"]
    ).first()
    if collection is None:
        return None
    discovery = discover_collections(scope, name=collection.name, purpose=collection.purpose)
    return {key: discovery[key] for key in ("discovery_id", "status", "expires_at")}


OPERATION = Operation(
    name="create_collection",
    summary="Create a collection (or reuse one of that name).",
    arguments=COLLECTION_ARGUMENTS,
    check=check,
    apply=apply,
    change=change,
    rank=10,
    argument_notes=COLLECTION_NOTES,
    review_hint="cite a discovery",
    follow_up=follow_up,
)
