"""A single operation (prepare_write, commit_write): the operation's definition does the work."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from records import validation as v
from records.approval import Touched
from records.errors import invalid
from records.services import WriteContext
from workflow.action_kinds.base import Kind, Prepared, Write, still_defined
from workflow.models import PreparedAction, ReviewTicket
from workflow.operations import Names, operation_named, parse_operation
from workflow.operations.checks import created_earlier
from workflow.scope import Scope
from workflow.tickets import clarification_text, load_tickets, parse_review_ids


class Single(Kind):
    prepare_tool = "prepare_write"
    commit_tool = "commit_write"
    max_bytes = v.MAX_DATA_BYTES
    first_write = F("arguments")

    def prepare(
        self,
        scope: Scope,
        *,
        operation: Any,
        arguments: Any,
        review_ids: Any,
        decision_reason: Any,
        clarification: Any = None,
    ) -> Prepared:
        op, args = parse_operation(operation, arguments)
        for key, names in op.arguments.items():
            if names is Names.RECORD and created_earlier(args[key]) is not None:
                raise invalid(
                    f"arguments.{key}",
                    f"{args[key]!r} names a record created earlier in a batch; that works only "
                    "in prepare_batch_write. Here give the record's ID.",
                )
        ids = parse_review_ids(review_ids)
        action = PreparedAction(
            operation=op.name,
            arguments=args,
            review_ids=ids,
            decision_reason=v.description(decision_reason, "decision_reason"),
            clarification=clarification_text(clarification),
        )
        return Prepared(action, load_tickets(scope, ids), head={"operation": op.name})

    def check(self, scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
        op = still_defined(action, action.operation)
        return op.check(scope, action.arguments, tickets, action.clarification)

    def apply(self, ctx: WriteContext, action: PreparedAction, *, approved: bool) -> dict[str, Any]:
        op = operation_named(action.operation)
        if approved and op.rebase is not None:  # a person's edit of other fields leaves it valid
            return op.apply(ctx, op.rebase(action.workspace_id, action.arguments))
        return op.apply(ctx, action.arguments)

    def after_commit(self, scope: Scope, outcome: dict[str, Any]) -> dict[str, Any]:
        """A fresh review of what the write made, so the next write can cite it at once: by the
        operations that define one (a resolution of a created record, a discovery of a created
        or reused collection)."""
        if outcome["status"] != "committed":
            return outcome
        follow_up = operation_named(outcome["operation"]).follow_up
        review = follow_up(scope, outcome["result"]) if follow_up else None
        return {**outcome, "review": review} if review else outcome

    def writes(self, action: PreparedAction) -> list[Write]:
        arguments = action.arguments if isinstance(action.arguments, dict) else {}
        return [Write(None, action.operation, arguments)]

    def first(self, extract: Any, operation: str) -> Write | None:
        return Write(None, operation, extract or {})

    def size(self, arguments: dict[str, Any]) -> int:
        return 1


KIND = Single()
