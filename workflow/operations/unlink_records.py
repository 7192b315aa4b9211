"""unlink_records: remove a link by its ID (also between archived records, to correct it)."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.approval import Touched
from records.models import Relationship
from records.selectors import in_workspace
from records.services import WriteContext
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, LinkChange
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    rel = in_workspace(
        Relationship.objects,
        workspace_id=scope.workspace_id,
        pk=v.entity_id(args["relationship_id"], "relationship_id"),
        kind="relationship",
    )
    evidence.record_reviewed(tickets, rel.source_id, clarification, "relationship_id (source)")
    evidence.record_reviewed(tickets, rel.target_id, clarification, "relationship_id (target)")
    return Touched.of(relationships=[rel.pk])  # both ends' collections


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    return {"removed_relationship": services.relationship_delete(ctx=ctx, **args)}


def change(args: Args, current: CurrentRecords) -> Change:
    removed = LinkChange(made=False, relationship_id=args.get("relationship_id"))
    return Change("unlink", links=(removed,))


OPERATION = Operation(
    name="unlink_records",
    summary="Remove a link.",
    arguments={"relationship_id": Names.RELATIONSHIP},
    check=check,
    apply=apply,
    change=change,
    rank=130,
    review_hint="resolve both ends",
    batchable=True,
)
