"""A batch (prepare_batch_write, commit_batch_write): up to ten existing-record operations and
record creations, checked and applied in order, all or nothing. A later link item may name a
record an earlier item creates as "actions[N]"."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models.fields.json import KeyTransform

from records import approval
from records import validation as v
from records.approval import Touched
from records.errors import AnchorError, invalid
from records.names import normalize_name
from records.services import WriteContext, lock_records
from workflow.action_kinds.base import JSONArrayLength, Kind, Prepared, Write, still_defined
from workflow.models import PreparedAction, ReviewTicket
from workflow.operations import (
    ApplyManyFn,
    Names,
    Operation,
    batch_operation_names,
    operation_named,
    parse_operation,
)
from workflow.operations.checks import created_earlier, read_together
from workflow.scope import Scope
from workflow.tickets import clarification_text, load_tickets, parse_review_ids

REFERENCE_KEYS = ("source_id", "target_id")  # the link ends that may name "actions[N]"
ITEMS = KeyTransform("items", "arguments")


def _at(index: int, exc: AnchorError) -> AnchorError:
    """The item's refusal, saying which item it is."""
    return AnchorError(
        exc.code, f"actions[{index}]: {exc.message}", **{**exc.details, "item_index": index}
    )


def _items(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checked items (1-10 objects of known keys: the tool's schema, BatchAction)."""
    items: list[dict[str, Any]] = []
    batchable = batch_operation_names()
    for index, raw in enumerate(value):
        field = f"actions[{index}]"
        if raw.get("operation") not in batchable:
            raise invalid(
                f"{field}.operation",
                f"{raw.get('operation')!r} is not allowed in a batch; use one of "
                f"{list(batchable)} (collection changes go through prepare_write).",
            )
        try:
            op, args = parse_operation(raw["operation"], raw.get("arguments"))
            v.json_object("arguments", args)
            # An item naming only records earlier items create needs no review of its own.
            all_created = _check_references(op, args, items) and not raw.get("review_ids")
            item = {
                "index": index,
                "operation": op.name,
                "arguments": args,
                "review_ids": [] if all_created else parse_review_ids(raw.get("review_ids")),
                "decision_reason": v.description(raw.get("decision_reason"), "decision_reason"),
                "clarification": clarification_text(raw.get("clarification")),
            }
        except AnchorError as exc:
            inner = exc.details.get("field")
            details = {**exc.details, **({"field": f"{field}.{inner}"} if inner else {})}
            raise AnchorError(
                exc.code, f"{field}.{exc.message}", **{**details, "item_index": index}
            ) from exc
        items.append(item)
    return items


def _check_references(op: Operation, args: dict[str, Any], earlier: list[dict[str, Any]]) -> bool:
    """Refuse an "actions[N]" that is not a link end naming an earlier item creating a record;
    True when every record the item names is such a reference (it needs no review_ids)."""
    references = {
        key: index
        for key, names in op.arguments.items()
        if names is Names.RECORD and (index := created_earlier(args[key])) is not None
    }
    for key, index in references.items():
        if not op.may_name_created_records:
            raise invalid(
                f"arguments.{key}",
                "only a link's source_id and target_id may name a record created earlier in "
                "the batch; give a record ID here.",
            )
        if (
            index >= len(earlier)
            or not operation_named(earlier[index]["operation"]).creates_a_record
        ):
            raise invalid(
                f"arguments.{key}",
                f'"actions[{index}]" must name an earlier item of this batch that creates a '
                "record.",
            )
    named = [k for k, names in op.arguments.items() if names is Names.RECORD]
    return bool(named) and all(k in references for k in named)


def batch_action(items: list[dict[str, Any]]) -> PreparedAction:
    """An unsaved batch of these items, shaped as _items leaves them."""
    return PreparedAction(
        operation=KIND.name,
        arguments={"items": items},
        review_ids=list(dict.fromkeys(r for item in items for r in item["review_ids"])),
        decision_reason="; ".join(f"[{i['index']}] {i['decision_reason']}" for i in items)[:2000],
        clarification="",
    )


def _one_creation_per_name(item: dict[str, Any], created: dict[tuple[Any, str], int]) -> None:
    """Each creation's review saw the collection before the batch: two items creating one
    name in one collection would each pass it, so the second is refused."""
    args = item["arguments"]
    name = (args["collection_id"], normalize_name(args["title"]))
    if name in created:
        raise invalid(
            "arguments.title",
            f"actions[{created[name]}] already creates {args['title']!r} in this collection; "
            "create it once (a later link item can name it as "
            f'"actions[{created[name]}]").',
        )
    created[name] = item["index"]


def _records_named(items: list[dict[str, Any]]) -> list[Any]:
    """The stored records the items name (not those an earlier item creates)."""
    return [
        item["arguments"].get(key)
        for item in items
        for key, names in operation_named(item["operation"]).arguments.items()
        if names is Names.RECORD and created_earlier(item["arguments"].get(key)) is None
    ]


def _item_ctx(ctx: WriteContext, item: dict[str, Any]) -> WriteContext:
    return replace(
        ctx,
        decision_reason=item["decision_reason"],
        clarification=item["clarification"],
        review_evidence=[
            e
            for e in ctx.review_evidence
            if e.get("review_id") in item["review_ids"] or "approved_by" in e
        ],
        item_index=item["index"],
    )


def _apply_many(
    ctx: WriteContext, items: list[dict[str, Any]], apply_many: ApplyManyFn
) -> list[dict[str, Any]]:
    """A batch of one operation on distinct records (an agenda's outcomes) in one go: the
    same rows and refusals as item by item, in a handful of statements instead of several an
    item."""
    try:
        return apply_many([(_item_ctx(ctx, i), i["arguments"]) for i in items])
    except AnchorError as exc:
        details = dict(exc.details)
        index = items[details.pop("update_index")]["index"]
        raise _at(index, AnchorError(exc.code, exc.message, **details)) from exc


def _apply_in_order(ctx: WriteContext, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Locked all at once, by ID: locked item by item, two batches naming the same records in
    # different orders could deadlock.
    lock_records(ctx, _records_named(items))
    results = []
    made: dict[int, str] = {}  # item index -> the record a creating item made
    for item in items:
        op = operation_named(item["operation"])
        # Each "actions[N]" end replaced by the record item N made.
        arguments = {
            key: made[index]
            if key in REFERENCE_KEYS and (index := created_earlier(value)) in made
            else value
            for key, value in item["arguments"].items()
        }
        try:
            result = op.apply(_item_ctx(ctx, item), arguments)
        except AnchorError as exc:
            raise _at(item["index"], exc) from exc
        if op.creates_a_record:
            made[item["index"]] = result["record"]["record_id"]
        results.append(result)
    return results


def _write(item: dict[str, Any]) -> Write:
    return Write(
        item.get("index"),
        item.get("operation", ""),
        item.get("arguments") or {},
        item.get("decision_reason", ""),
        item.get("clarification", ""),
    )


class Batch(Kind):
    name = "batch"
    prepare_tool = "prepare_batch_write"
    commit_tool = "commit_batch_write"
    first_write = KeyTransform("0", ITEMS)
    count = JSONArrayLength(ITEMS)

    def prepare(self, scope: Scope, *, actions: Any) -> Prepared:
        action = batch_action(_items(actions))
        return Prepared(action, load_tickets(scope, action.review_ids))

    def check(self, scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
        by_id = {t.pk: t for t in tickets}
        touched = approval.NOTHING
        created: dict[tuple[Any, str], int] = {}  # (collection, normalized title) -> item index
        items = action.arguments["items"]
        with read_together(scope.workspace_id, _records_named(items)):  # one read, not one each
            for item in items:
                op = still_defined(action, item["operation"])
                item_tickets = [by_id[r] for r in item["review_ids"]]
                try:
                    check = op.check(scope, item["arguments"], item_tickets, item["clarification"])
                    touched |= check
                    if op.creates_a_record:
                        _one_creation_per_name(item, created)
                except AnchorError as exc:
                    raise _at(item["index"], exc) from exc
        return touched  # every item, every endpoint

    def apply(self, ctx: WriteContext, action: PreparedAction, *, approved: bool) -> dict[str, Any]:
        items = action.arguments["items"]
        names = {i["operation"] for i in items}
        apply_many = operation_named(names.pop()).apply_many if len(names) == 1 else None
        records = [i["arguments"].get("record_id") for i in items]
        if apply_many is not None and len(items) > 1 and len(set(records)) == len(records):
            results = _apply_many(ctx, items, apply_many)
        else:
            results = _apply_in_order(ctx, items)
        return {
            "items": [
                {"item_index": i["index"], "operation": i["operation"], **result}
                for i, result in zip(items, results, strict=True)
            ]
        }

    def after_commit(self, scope: Scope, outcome: dict[str, Any]) -> dict[str, Any]:
        """Each created record's review, as commit_write gives one."""
        if outcome["status"] != "committed":
            return outcome
        items = []
        for item in outcome["result"]["items"]:
            follow_up = operation_named(item["operation"]).follow_up
            review = follow_up(scope, item) if follow_up else None
            items.append({**item, "review": review} if review else item)
        return {**outcome, "result": {**outcome["result"], "items": items}}

    def writes(self, action: PreparedAction) -> list[Write]:
        arguments = action.arguments if isinstance(action.arguments, dict) else {}
        return [_write(i) for i in arguments.get("items", [])]

    def first(self, extract: Any, operation: str) -> Write | None:
        return _write(extract if isinstance(extract, dict) else {})

    def size(self, arguments: dict[str, Any]) -> int:
        return len(arguments.get("items", []))

    def pins_version(self, arguments: Any, record_id: str) -> bool:
        return isinstance(arguments, dict) and any(
            super(Batch, self).pins_version(i.get("arguments"), record_id)
            for i in arguments.get("items", [])
        )


KIND = Batch()
