"""create_record: a new record in a collection, after a review of its title there."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.approval import Touched
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, FieldChange, added_fields
from workflow.operations.checks import collection_named
from workflow.resolution import resolve_written
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    collection = collection_named(scope, args["collection_id"])
    title = v.title(args["title"])
    v.json_object("data", args["data"])
    evidence.title_reviewed(
        tickets, title=title, collection_id=collection.pk, clarification=clarification
    )
    return Touched.of(collections=[collection.pk])


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_create(ctx=ctx, **args)
    return {"record": record_dict(record, view="write", aliases=[])}  # a new record has none


def change(args: Args, current: CurrentRecords) -> Change:
    title = FieldChange("title", "added", after=args.get("title"))
    return Change(
        "create",
        created_in=args.get("collection_id"),
        fields=(title, *added_fields(args.get("data") or {})),
    )


def follow_up(scope: Scope, result: dict[str, Any]) -> dict[str, Any] | None:
    """A resolution of the new record by ID, so the next write (a link) can cite it at once."""
    record = result["record"]
    resolution = resolve_written(scope, record["record_id"], record["collection_id"])
    kept = ("resolution_id", "status", "selected_record_id", "expires_at")
    return {key: resolution[key] for key in kept}


OPERATION = Operation(
    name="create_record",
    summary="Create a record.",
    arguments={"collection_id": Names.COLLECTION, "title": Names.VALUE, "data": Names.VALUE},
    check=check,
    apply=apply,
    change=change,
    rank=50,
    argument_notes={"data": "JSON object, 16 KiB"},
    review_hint="cite a resolution of the title in that collection (no context_record_ids)",
    batchable=True,
    follow_up=follow_up,
    creates_a_record=True,
)
