"""update_collection: replace a collection's name and description."""

from __future__ import annotations

from typing import Any

from records import services
from records.approval import Touched
from records.names import normalize_name
from records.selectors.serialize import collection_dict
from records.services import WriteContext
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, added_fields
from workflow.operations.checks import (
    COLLECTION_ARGUMENTS,
    COLLECTION_NOTES,
    collection_fields,
    collection_named,
)
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    collection = collection_named(scope, args["collection_id"])
    fields = collection_fields(args)
    # A discovery of exactly the new name and purpose, whose catalog lists this collection.
    ticket = evidence.discovery_for_name(tickets, name=fields.name, purpose=fields.purpose)
    evidence.collection_in_discovery([ticket], collection.pk)
    renamed = normalize_name(fields.name) != collection.normalized_name
    if renamed or fields.purpose != collection.purpose:
        others = [
            s for s in ticket.answer.get("suggestions", []) if s["collection_id"] != collection.pk
        ]
        if others:
            evidence.require_clarification(
                clarification,
                "The new name or purpose resembles other collections "
                f"({', '.join(repr(s['name']) for s in others[:5])}).",
                suggestions=[s["collection_id"] for s in others],
            )
    return Touched.of(collections=[collection.pk])


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    collection = services.collection_update(
        ctx=ctx, collection_id=args["collection_id"], fields=collection_fields(args)
    )
    return {"collection": collection_dict(collection, view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    # Shown as the description it sets: the collection's current one is on its own page.
    described = {k: value for k, value in args.items() if k != "collection_id"}
    return Change(
        "update collection", collection_id=args.get("collection_id"), fields=added_fields(described)
    )


OPERATION = Operation(
    name="update_collection",
    summary="Replace a collection's name and description.",
    arguments={"collection_id": Names.COLLECTION, **COLLECTION_ARGUMENTS},
    check=check,
    apply=apply,
    change=change,
    rank=20,
    argument_notes=COLLECTION_NOTES,
    review_hint="cite a discovery",
)
