"""update_record: merge changes into a record's data, top-level keys replaced."""

from __future__ import annotations

from typing import Any

from records import services
from records import validation as v
from records.errors import VERSION_CONFLICT, AnchorError
from records.models import Record, RecordVersion
from records.selectors.serialize import record_dict
from records.services import WriteContext
from workflow.operations import Args, Names, Operation
from workflow.operations.change import Change, CurrentRecords, merged_fields
from workflow.operations.checks import existing_record


def apply(ctx: WriteContext, args: Args) -> dict[str, Any]:
    return {"record": record_dict(services.record_update(ctx=ctx, **args), view="write")}


def apply_many(updates: list[tuple[WriteContext, Args]]) -> list[dict[str, Any]]:
    """apply for each (context, arguments), of distinct records, in one bulk write."""
    written = services.record_update_many([services.RecordUpdate(ctx, **a) for ctx, a in updates])
    return [
        {"record": record_dict(record, view="write", aliases=aliases)}
        for record, aliases in written
    ]


def rebase(workspace_id: str, args: Args) -> Args:
    """The update a person's approval applies when the record moved on since it was prepared.

    A person's edit of other fields does not make a pending update stale: the update replaces
    only its own top-level keys, so it applies on top of the record as it is now when each of
    those keys still holds what the agent saw at `expected_version` (the fields it writes are
    the fields it read: they are what its preview showed, old and new). When one of them
    changed, the update would overwrite a value the agent never saw, and the refusal names
    the keys both changed. Archiving or restoring in between is never rebased over.
    """
    expected = args.get("expected_version")
    current = (
        Record.objects.filter(workspace_id=workspace_id, pk=args.get("record_id"))
        .values("version", "data", "archived_at")
        .first()
    )
    if current is None or not isinstance(expected, int) or current["version"] == expected:
        return args  # the write's own checks say what is wrong, if anything
    seen = (
        RecordVersion.objects.filter(record_id=args["record_id"], version=expected)
        .values("data", "archived_at")
        .first()
    )
    if seen is None or (seen["archived_at"] is None) != (current["archived_at"] is None):
        return args
    was, now = seen["data"], current["data"]  # JSON objects, as every record's data is
    both = [key for key in written_keys(args) if was.get(key, _ABSENT) != now.get(key, _ABSENT)]
    if both:
        raise AnchorError(
            VERSION_CONFLICT,
            f"The record changed since version {expected}, and the change also wrote "
            f"{', '.join(both)}, which this update writes.",
            record_id=args["record_id"],
            expected_version=expected,
            current_version=current["version"],
            fields_changed_by_both=both,
        )
    return {**args, "expected_version": current["version"]}


_ABSENT = object()


def written_keys(args: Args) -> list[str]:
    """The top-level data keys this update replaces."""
    changes = args.get("changes")
    return sorted(changes) if isinstance(changes, dict) else []


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
    check=existing_record(
        "changing data", first=lambda args: v.json_object("changes", args["changes"])
    ),
    apply=apply,
    change=change,
    rank=60,
    argument_notes={"changes": "top-level keys merged; null is stored"},
    batchable=True,
    rebase=rebase,
    written_keys=written_keys,
    apply_many=apply_many,
)
