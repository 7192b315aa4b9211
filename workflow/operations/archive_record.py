"""archive_record: hide a record from search and resolution, keeping it and its history."""

from __future__ import annotations

from typing import Any

from records import services
from records.approval import Touched
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import existing_record_checked
from workflow.operations.registry import Args, Names, Operation
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    return existing_record_checked(scope, args, tickets, clarification, doing="archiving again")


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_archive(
        ctx=ctx, record_id=args["record_id"], expected_version=args["expected_version"]
    )
    return {"record": record_dict(record, view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    return Change(
        "archive",
        record_id=args.get("record_id"),
        fields=(FieldChange("archived", "changed", "no", "yes"),),
    )


OPERATION = Operation(
    name="archive_record",
    summary="Archive a record (hidden from search, kept).",
    arguments={"record_id": Names.RECORD, "expected_version": Names.VALUE},
    check=check,
    apply=apply,
    change=change,
    rank=70,
    batchable=True,
)
