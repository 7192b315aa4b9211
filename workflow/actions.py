"""prepare_write and commit_write: the exact write, previewed, then applied after rechecks.

Prepare validates the real mutation inside a savepoint that is always rolled back, so it leaves
nothing behind (triggers fire and are undone with it). Commit claims the action row, locks the
counters its reviews depend on, rechecks everything, applies the write and stores the result in
one transaction; replaying a committed action returns that stored result.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import AWAITING_APPROVAL, STALE_REVIEW, AnchorError, invalid, not_found
from records.ids import is_valid_id
from records.models import Collection
from records.services import WriteContext
from workflow.counters import lock_counters
from workflow.models import PreparedAction
from workflow.operations import OPERATIONS, parse_operation
from workflow.scope import Scope
from workflow.tickets import (
    TICKET_LIFETIME,
    check_fresh,
    clarification_text,
    load_tickets,
    parse_review_ids,
    ticket_evidence,
)

ACTION_LIFETIME = TICKET_LIFETIME
STALE = PreparedAction.STALE


class _Rollback(Exception):
    def __init__(self, preview: dict[str, Any]) -> None:
        self.preview = preview


def _requires_approval(collection_ids: list[str]) -> bool:
    return Collection.objects.filter(pk__in=collection_ids, requires_approval=True).exists()


def prepare_write(
    scope: Scope,
    *,
    operation: Any,
    arguments: Any,
    review_ids: Any,
    decision_reason: Any,
    clarification: Any = None,
) -> dict[str, Any]:
    op, args = parse_operation(operation, arguments)
    ids = parse_review_ids(review_ids)
    reason = v.description(decision_reason, "decision_reason")
    said = clarification_text(clarification)
    tickets = load_tickets(scope, ids)
    check_fresh(tickets)
    check = op.check(scope, args, tickets, said)
    v.json_object("arguments", args)  # fields are checked first so errors name the field
    evidence = [ticket_evidence(t) for t in tickets]
    ctx = WriteContext(
        workspace_id=scope.workspace_id,
        actor_id=scope.actor_id,
        decision_reason=reason,
        clarification=said,
        review_evidence=evidence,
    )
    try:
        with transaction.atomic():
            raise _Rollback(op.apply(ctx, args))
    except _Rollback as dry_run:
        preview = dry_run.preview
    counters: dict[str, int] = {}
    for ticket in tickets:
        counters.update(ticket.counters)
    needs_approval = _requires_approval(check.collection_ids)
    now = timezone.now()
    action = PreparedAction.objects.create(
        workspace_id=scope.workspace_id,
        actor_id=scope.actor_id,
        operation=op.name,
        arguments=args,
        review_ids=ids,
        decision_reason=reason,
        clarification=said,
        evidence=evidence,
        counters=counters,
        preview=preview,
        collection_ids=check.collection_ids,
        created_at=now,
        expires_at=now + ACTION_LIFETIME,
    )
    return {
        "action_id": action.pk,
        "operation": op.name,
        "preview": preview,
        "preview_note": "IDs and timestamps of new objects are provisional; use those that "
        "commit_write returns.",
        "requires_human_approval": needs_approval,
        "expires_at": action.expires_at.isoformat(),
    }


def _outcome(action: PreparedAction, *, replayed: bool) -> dict[str, Any]:
    if action.state == PreparedAction.COMMITTED:
        return {
            "status": "committed",
            "action_id": action.pk,
            "operation": action.operation,
            "replayed": replayed,
            "result": action.result,
            "committed_at": action.decided_at.isoformat() if action.decided_at else None,
        }
    if action.state == PreparedAction.AWAITING_APPROVAL:
        return {
            "status": "awaiting_approval",
            "action_id": action.pk,
            "operation": action.operation,
            "message": "A collection this write touches needs a person's approval. Nothing is "
            "written yet; tell the user it awaits review in the admin, and call commit_write "
            "with the same action_id later to read the decision. Do not prepare it again.",
        }
    if action.state == PreparedAction.REJECTED:
        return {
            "status": "rejected",
            "action_id": action.pk,
            "operation": action.operation,
            "rejected_by": action.decided_by,
            "reason": action.decision_note,
            "message": "A person rejected this write; nothing was written. Tell the user and "
            "do not retry it unchanged.",
        }
    raise AssertionError(f"no outcome for state {action.state}")


def _stale(action: PreparedAction, message: str, **details: Any) -> AnchorError:
    return AnchorError(STALE_REVIEW, message, action_id=action.pk, **details)


def _parse_action_id(action_id: Any) -> str:
    if not is_valid_id(action_id):
        raise invalid("action_id", f"{action_id!r} is not an action_id from prepare_write.")
    return str(action_id)


def _apply(action: PreparedAction, scope: Scope, *, approved_by: str = "") -> dict[str, Any]:
    """Recheck and apply inside the caller's transaction. Raises on any failed check."""
    op = OPERATIONS[action.operation]
    current = lock_counters(action.workspace_id, action.counters)
    tickets = load_tickets(scope, action.review_ids)
    try:
        check_fresh(tickets, current)
    except AnchorError as exc:
        if approved_by and "expired" in exc.message:
            pass  # a person's review takes longer than 15 minutes; staleness still counts
        else:
            raise _stale(action, exc.message, **exc.details) from exc
    check = op.check(scope, action.arguments, tickets, action.clarification)
    evidence = list(action.evidence)
    if approved_by:
        evidence.append({"approved_by": approved_by, "approved_at": timezone.now().isoformat()})
    ctx = WriteContext(
        workspace_id=action.workspace_id,
        actor_id=action.actor_id,
        decision_reason=action.decision_reason,
        clarification=action.clarification,
        review_evidence=evidence,
        action_id=action.pk,
    )
    result = op.apply(ctx, action.arguments)
    action.collection_ids = check.collection_ids
    return result


def _mark_stale(action_id: str) -> None:
    PreparedAction.objects.filter(
        pk=action_id, state__in=[PreparedAction.PREPARED, PreparedAction.AWAITING_APPROVAL]
    ).update(state=STALE, decided_at=timezone.now())


def commit_write(scope: Scope, *, action_id: Any) -> dict[str, Any]:
    action_id = _parse_action_id(action_id)
    try:
        with transaction.atomic():
            action = (
                PreparedAction.objects.select_for_update()
                .filter(pk=action_id, workspace_id=scope.workspace_id, actor_id=scope.actor_id)
                .first()
            )
            if action is None:
                raise not_found("action", action_id)
            if action.state == STALE:
                raise _stale(
                    action,
                    "This action went stale before it was committed; "
                    "retrieve current state, review again and prepare a new action.",
                )
            if action.state != PreparedAction.PREPARED:
                return _outcome(action, replayed=True)
            if action.expires_at <= timezone.now():
                raise _stale(
                    action,
                    "This action expired (actions last 15 minutes); review "
                    "again and prepare a new one.",
                )
            if _requires_approval(action.collection_ids):
                # Recheck now so a stale action is refused at once, not after a person's wait.
                check_fresh(load_tickets(scope, action.review_ids))
                action.state = PreparedAction.AWAITING_APPROVAL
                action.save(update_fields=["state"])
                return _outcome(action, replayed=False)
            action.result = _apply(action, scope)
            action.state = PreparedAction.COMMITTED
            action.decided_at = timezone.now()
            action.save(update_fields=["result", "state", "decided_at", "collection_ids"])
            return _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in (STALE_REVIEW, "VERSION_CONFLICT", "ARCHIVED"):
            _mark_stale(action_id)
        raise


def _pending(action_id: Any, workspace_id: str | None = None) -> PreparedAction:
    action_id = _parse_action_id(action_id)
    query = PreparedAction.objects.select_for_update().filter(pk=action_id)
    if workspace_id:
        query = query.filter(workspace_id=workspace_id)
    action = query.first()
    if action is None:
        raise not_found("action", action_id)
    if action.state != PreparedAction.AWAITING_APPROVAL:
        raise AnchorError(
            AWAITING_APPROVAL,
            f"Action {action_id} is {action.state}, not awaiting approval.",
            state=action.state,
        )
    return action


def approve_prepared_action(*, action_id: Any, reviewer: str) -> dict[str, Any]:
    """A person approves: the same rechecks as commit (stale is refused), then apply."""
    try:
        with transaction.atomic():
            action = _pending(action_id)
            scope = Scope(action.workspace_id, action.actor_id)
            action.result = _apply(action, scope, approved_by=reviewer)
            action.state = PreparedAction.COMMITTED
            action.decided_by = reviewer
            action.decided_at = timezone.now()
            action.save(
                update_fields=["result", "state", "decided_by", "decided_at", "collection_ids"]
            )
            return _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in (STALE_REVIEW, "VERSION_CONFLICT", "ARCHIVED"):
            _mark_stale(str(action_id))
        raise


def reject_prepared_action(*, action_id: Any, reviewer: str, reason: str) -> dict[str, Any]:
    note = v.description(reason, "reason")
    with transaction.atomic():
        action = _pending(action_id)
        action.state = PreparedAction.REJECTED
        action.decided_by = reviewer
        action.decision_note = note
        action.decided_at = timezone.now()
        action.save(update_fields=["state", "decided_by", "decision_note", "decided_at"])
        return _outcome(action, replayed=False)


def pending_approval_count(workspace_id: str) -> int:
    return PreparedAction.objects.filter(
        workspace_id=workspace_id, state=PreparedAction.AWAITING_APPROVAL
    ).count()
