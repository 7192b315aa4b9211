"""add_collection_alias: another name for a collection."""

from __future__ import annotations

from typing import Any

from records import services
from records.models import Collection
from records.selectors.serialize import collection_dict
from records.services import WriteContext
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import collection_alias_checked


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    services.collection_alias_add(ctx=ctx, **args)
    collection = Collection.objects.get(pk=args["collection_id"])
    return {"collection": collection_dict(collection, view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    alias = FieldChange("alias", "added", after=args.get("alias"))
    return Change("add collection alias", collection_id=args.get("collection_id"), fields=(alias,))


OPERATION = Operation(
    name="add_collection_alias",
    summary="Add another name for a collection.",
    arguments={"collection_id": Names.COLLECTION, "alias": Names.VALUE},
    check=collection_alias_checked,
    apply=apply,
    change=change,
    rank=30,
    review_hint="cite a discovery of the alias",
)
