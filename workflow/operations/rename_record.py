"""rename_record: change a record's title, after a review of the new title."""

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
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import existing_record_checked, record_named
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    touched = existing_record_checked(scope, args, tickets, clarification, doing="renaming")
    record = record_named(scope, args["record_id"], "record_id")
    evidence.title_reviewed(
        tickets,
        title=v.title(args["title"]),
        collection_id=record.collection_id,
        clarification=clarification,
        ignore_record_id=record.pk,
    )
    return touched


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    return {"record": record_dict(services.record_rename(ctx=ctx, **args), view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    record = current.record(args.get("record_id"))
    title = FieldChange("title", "changed", record.title if record else "", args.get("title"))
    return Change("rename", record_id=args.get("record_id"), fields=(title,))


OPERATION = Operation(
    name="rename_record",
    summary="Change a record's title.",
    arguments={"record_id": Names.RECORD, "title": Names.VALUE, "expected_version": Names.VALUE},
    check=check,
    apply=apply,
    change=change,
    rank=80,
    review_hint="also resolve the new title",
    batchable=True,
)
