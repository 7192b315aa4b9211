"""remove_record_alias: drop one of a record's other names (allowed on archived records too)."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import ALIAS_WORD, existing_record


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    return {"record": record_dict(services.record_alias_remove(ctx=ctx, **args), view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    alias = FieldChange("alias", "removed", before=args.get("alias"))
    return Change("remove alias from", record_id=args.get("record_id"), fields=(alias,))


OPERATION = Operation(
    name="remove_record_alias",
    summary="Remove a record alias.",
    arguments={"record_id": Names.RECORD, "alias": Names.VALUE, "expected_version": Names.VALUE},
    check=existing_record(
        needs_word=ALIAS_WORD, first=lambda args: v.title(args["alias"], "alias")
    ),
    apply=apply,
    change=change,
    rank=100,
    batchable=True,
)
