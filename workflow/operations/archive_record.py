"""archive_record: hide a record from search and resolution, keeping it and its history."""

from __future__ import annotations

from typing import Any

from records import services
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, FieldChange
from workflow.operations.checks import existing_record


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    return {"record": record_dict(services.record_archive(ctx=ctx, **args), view="write")}


def change(args: Args, current: CurrentRecords) -> Change:
    archived = FieldChange("archived", "changed", "no", "yes")
    return Change("archive", record_id=args.get("record_id"), fields=(archived,))


OPERATION = Operation(
    name="archive_record",
    summary="Archive a record (hidden from search, kept).",
    arguments={"record_id": Names.RECORD, "expected_version": Names.VALUE},
    check=existing_record("archiving again"),
    apply=apply,
    change=change,
    rank=70,
    batchable=True,
)
