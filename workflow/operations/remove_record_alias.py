"""remove_record_alias: drop one of a record's other names (allowed on archived records too)."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.approval import Touched
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import ALIAS_WORD, existing_record_checked
from workflow.operations.registry import Args, Names, Operation
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    v.title(args["alias"], "alias")
    return existing_record_checked(scope, args, tickets, clarification, needs_word=ALIAS_WORD)


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_alias_remove(
        ctx=ctx,
        record_id=args["record_id"],
        alias=args["alias"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    return Change(
        "remove alias from",
        record_id=args.get("record_id"),
        fields=(FieldChange("alias", "removed", before=args.get("alias")),),
    )


OPERATION = Operation(
    name="remove_record_alias",
    summary="Remove a record alias.",
    arguments={"record_id": Names.RECORD, "alias": Names.VALUE, "expected_version": Names.VALUE},
    check=check,
    apply=apply,
    change=change,
    rank=100,
    batchable=True,
)
