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
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, LinkChange
from workflow.operations.checks import created_earlier, record_named
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    rel_type = v.relationship_type(args["relationship_type"])
    # An end an earlier create_record item of the batch makes (prepare_batch_write checked
    # that) had its title reviewed, and its collection touched, there.
    ends = {
        field: record_named(scope, args[field], field)
        for field in ("source_id", "target_id")
        if created_earlier(args[field]) is None
    }
    linked = (
        len(ends) == 2
        and Relationship.objects.filter(
            source=ends["source_id"], relationship_type=rel_type, target=ends["target_id"]
        ).exists()
    )
    if not linked:  # linking an existing link again is a no-op, allowed either way
        for record in ends.values():
            check_active(record, "linking")
    for field, record in ends.items():
        evidence.record_reviewed(tickets, record.pk, clarification, field)
    return Touched.of(records=[record.pk for record in ends.values()])  # both ends' collections


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    rel, created = services.relationship_create(ctx=ctx, **args)
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
    ends = {key: args.get(key) for key in ("source_id", "relationship_type", "target_id")}
    return Change("link", links=(LinkChange(made=True, **ends),))


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
