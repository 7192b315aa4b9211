"""link_records: a typed link from one record to another (linking again changes nothing)."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.approval import Touched
from records.models import Relationship
from records.selectors import check_active
from records.selectors.serialize import relationship_dict
from records.services import WriteContext
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords, LinkChange
from workflow.operations.checks import created_earlier, record_named
from workflow.operations.registry import Args, Names, Operation
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    rel_type = v.relationship_type(args["relationship_type"])
    ends = []
    for field in ("source_id", "target_id"):
        if created_earlier(args[field]) is not None:
            # A record an earlier create_record item of the batch makes (prepare_batch_write
            # checked that): its title was reviewed there, and its collection is touched there.
            continue
        ends.append((field, record_named(scope, args[field], field)))
    if (
        len(ends) < 2
        or not Relationship.objects.filter(
            source=ends[0][1], relationship_type=rel_type, target=ends[1][1]
        ).exists()
    ):  # linking an existing link again is a no-op, allowed either way
        for _, record in ends:
            check_active(record, "linking")
    for field, record in ends:
        evidence.record_reviewed(tickets, record.pk, clarification, field)
    return Touched.of(records=[record.pk for _, record in ends])  # both ends' collections


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    rel, created = services.relationship_create(
        ctx=ctx,
        source_id=args["source_id"],
        relationship_type=args["relationship_type"],
        target_id=args["target_id"],
    )
    if not created:  # nothing changed, but the decision and its evidence stay in the history
        state = {**relationship_dict(rel), "target_title": rel.target.title}
        services.audit(
            ctx,
            kind="relationship.already_linked",
            entity_type="relationship",
            entity_id=rel.pk,
            record_id=rel.source_id,
            collection_id=rel.source.collection_id,
            before=state,
            after=state,
        )
    return {"relationship": relationship_dict(rel), "created": created}


def change(args: Args, current: CurrentRecords) -> Change:
    made = LinkChange(
        made=True,
        source_id=args.get("source_id"),
        relationship_type=args.get("relationship_type"),
        target_id=args.get("target_id"),
    )
    return Change("link", links=(made,))


OPERATION = Operation(
    name="link_records",
    summary="Link two records.",
    arguments={
        "source_id": Names.RECORD,
        "relationship_type": Names.VALUE,
        "target_id": Names.RECORD,
    },
    check=check,
    apply=apply,
    change=change,
    rank=120,
    review_hint="resolve both",
    batchable=True,
    may_name_created_records=True,
)
