"""set_self: which record "me" means for this actor, on the user's word."""

from __future__ import annotations

from typing import Any

from records import services
from records.services import WriteContext
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords
from workflow.operations.checks import existing_record


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    mapping = services.self_mapping_set(ctx=ctx, **args)
    return {"self_mapping": {"actor_id": mapping.actor_id, "record_id": mapping.record_id}}


def change(args: Args, current: CurrentRecords) -> Change:
    return Change(
        "map “me” to",
        record_id=args.get("record_id"),
        notes=("The agent's actor will read this record as “me” from now on.",),
    )


OPERATION = Operation(
    name="set_self",
    summary="Record which record 'me' means for this actor.",
    arguments={"record_id": Names.RECORD, "expected_version": Names.VALUE},
    check=existing_record(
        "mapping yourself to it",
        "A self mapping decides what 'me' means; record the user's explicit statement of who "
        "they are.",
    ),
    apply=apply,
    change=change,
    rank=110,
    batchable=True,
)
