"""A toy operation, defined here alone: flag_record sets a record's `flag` field.

It stands for the next operation someone adds: registered from this file, it must be prepared,
batched, committed and reviewed in the admin with no other file touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from records import services
from records.approval import Touched
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations import Names, Operation, register, unregister
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import existing_record_checked
from workflow.scope import Scope


def _check(scope: Scope, args: dict[str, Any], tickets: list[ReviewTicket], said: str) -> Touched:
    return existing_record_checked(scope, args, tickets, said, doing="flagging")


def _apply(ctx: WriteContext, args: dict[str, Any]) -> dict[str, Any]:
    record = services.record_update(
        ctx=ctx,
        record_id=args["record_id"],
        changes={"flag": args["reason"]},
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def _change(args: dict[str, Any], current: CurrentRecords) -> Change:
    return Change(
        "flag",
        record_id=args.get("record_id"),
        fields=(FieldChange("flag", "added", after=args.get("reason")),),
    )


def toy(name: str = "flag_record", *, batchable: bool = True, rank: int = 10_000) -> Operation:
    return Operation(
        name=name,
        summary="Flag a record for a person's attention.",
        arguments={
            "record_id": Names.RECORD,
            "reason": Names.VALUE,
            "expected_version": Names.VALUE,
        },
        check=_check,
        apply=_apply,
        change=_change,
        rank=rank,
        batchable=batchable,
        argument_notes={"reason": "a sentence"},
        review_hint="cite a resolution of the record",
    )


@contextmanager
def registered(operation: Operation) -> Iterator[Operation]:
    register(operation)
    try:
        yield operation
    finally:
        unregister(operation.name)
