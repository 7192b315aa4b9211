"""set_self: which record "me" means for this actor, on the user's word."""

from __future__ import annotations

from typing import Any

from records import services
from records.approval import Touched
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords
from workflow.operations.checks import existing_record_checked
from workflow.operations.registry import Args, Names, Operation
from workflow.scope import Scope


def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
    return existing_record_checked(
        scope,
        args,
        tickets,
        clarification,
        doing="mapping yourself to it",
        needs_word="A self mapping decides what 'me' means; record the user's explicit "
        "statement of who they are.",
    )


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    mapping = services.self_mapping_set(
        ctx=ctx, record_id=args["record_id"], expected_version=args["expected_version"]
    )
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
    check=check,
    apply=apply,
    change=change,
    rank=110,
    batchable=True,
)
