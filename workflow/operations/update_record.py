"""update_record: merge changes into a record's data, top-level keys replaced."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.approval import Touched
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords, merged_fields
from workflow.operations.checks import existing_record_checked
from workflow.operations.registry import Args, Names, Operation
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    v.json_object("changes", args["changes"])
    return existing_record_checked(scope, args, tickets, clarification, doing="changing data")


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_update(
        ctx=ctx,
        record_id=args["record_id"],
        changes=args["changes"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    record = current.record(args.get("record_id"))
    return Change(
        "update",
        record_id=args.get("record_id"),
        fields=merged_fields(record.data if record else {}, args.get("changes") or {}),
    )


OPERATION = Operation(
    name="update_record",
    summary="Merge changes into a record's data (top-level keys).",
    arguments={
        "record_id": Names.RECORD,
        "changes": Names.VALUE,
        "expected_version": Names.VALUE,
    },
    check=check,
    apply=apply,
    change=change,
    rank=60,
    batchable=True,
)
