"""Prepared actions: an exact write, previewed, then applied after the server's rechecks.

Three kinds share one lifecycle: a single operation (prepare_write), a batch of existing-record
operations (prepare_batch_write) and a reviewed import (prepare_import). Prepare validates the
real mutation inside a savepoint that is always rolled back, so it leaves nothing behind
(triggers fire and are undone with it). Commit claims the action row, locks the revision
counters its reviews depend on, rechecks everything, applies the write and stores the result in
one transaction; replaying a committed action returns that stored result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from records import approval
from records import validation as v
from records.approval import Touched
from records.counters import lock_counters, moved_counters
from records.errors import (
    ARCHIVED,
    AWAITING_APPROVAL,
    NOT_FOUND,
    STALE_REVIEW,
    VERSION_CONFLICT,
    AnchorError,
    invalid,
    not_found,
)
from records.ids import is_valid_id
from records.services import WriteContext
from workflow import imports
from workflow.models import PreparedAction, ReviewTicket
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
BATCH = "batch"
MAX_BATCH_ITEMS = 10
# Batches change existing records only; creation keeps its single-write duplicate review.
BATCH_OPERATIONS = (
    "update_record",
    "archive_record",
    "rename_record",
    "add_record_alias",
    "remove_record_alias",
    "set_self",
    "link_records",
    "unlink_records",
)
# Errors that mean the prepared write can never succeed as prepared.
FINAL_ERRORS = (STALE_REVIEW, VERSION_CONFLICT, ARCHIVED)


class _Rollback(Exception):
    def __init__(self, preview: dict[str, Any]) -> None:
        self.preview = preview


# --- what each kind of action checks and applies ---------------------------------------------


@dataclass(frozen=True)
class Kind:
    # (scope, action, tickets) -> what the write touches; raises when evidence fails
    check: Callable[[Scope, PreparedAction, list[ReviewTicket]], Touched]
    # (ctx, action) -> result; runs inside the caller's transaction
    apply: Callable[[WriteContext, PreparedAction], dict[str, Any]]
    commit_tool: str


def _single_check(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
    op = OPERATIONS[action.operation]
    return op.check(scope, action.arguments, tickets, action.clarification)


def _single_apply(ctx: WriteContext, action: PreparedAction) -> dict[str, Any]:
    return OPERATIONS[action.operation].apply(ctx, action.arguments)


def _batch_check(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
    by_id = {t.pk: t for t in tickets}
    touched = approval.NOTHING
    for item in action.arguments["items"]:
        op = OPERATIONS[item["operation"]]
        item_tickets = [by_id[r] for r in item["review_ids"]]
        try:
            check = op.check(scope, item["arguments"], item_tickets, item["clarification"])
        except AnchorError as exc:
            raise AnchorError(
                exc.code,
                f"actions[{item['index']}]: {exc.message}",
                item_index=item["index"],
                **exc.details,
            ) from exc
        touched |= check  # every item, every endpoint
    return touched


def _batch_apply(ctx: WriteContext, action: PreparedAction) -> dict[str, Any]:
    results = []
    for item in action.arguments["items"]:
        item_ctx = WriteContext(
            workspace_id=ctx.workspace_id,
            actor_id=ctx.actor_id,
            decision_reason=item["decision_reason"],
            clarification=item["clarification"],
            review_evidence=[
                e
                for e in ctx.review_evidence
                if e.get("review_id") in item["review_ids"] or "approved_by" in e
            ],
            action_id=ctx.action_id,
            item_index=item["index"],
        )
        try:
            result = OPERATIONS[item["operation"]].apply(item_ctx, item["arguments"])
        except AnchorError as exc:
            raise AnchorError(
                exc.code,
                f"actions[{item['index']}]: {exc.message}",
                item_index=item["index"],
                **exc.details,
            ) from exc
        results.append({"item_index": item["index"], "operation": item["operation"], **result})
    return {"items": results}


def _import_check(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
    collection, _, links = imports.parse_import(scope, action.arguments)
    linked = imports.check_import_links(links, tickets, action.clarification)
    # The rows' collection and every existing record a link names. (A row decided
    # use_existing is a record of the rows' collection: its candidates come from it alone.)
    return Touched.of(collections=[collection.pk], records=linked)


def _import_apply(ctx: WriteContext, action: PreparedAction) -> dict[str, Any]:
    return imports.apply_import(ctx, action.arguments)


SINGLE = Kind(_single_check, _single_apply, "commit_write")
KINDS = {
    BATCH: Kind(_batch_check, _batch_apply, "commit_batch_write"),
    imports.OPERATION: Kind(_import_check, _import_apply, "commit_import"),
}


def _kind(action: PreparedAction) -> Kind:
    return KINDS.get(action.operation, SINGLE)


# --- shared lifecycle --------------------------------------------------------------------------


def _ctx(action: PreparedAction, evidence: list[Any] | None = None) -> WriteContext:
    return WriteContext(
        workspace_id=action.workspace_id,
        actor_id=action.actor_id,
        decision_reason=action.decision_reason,
        clarification=action.clarification,
        review_evidence=list(action.evidence) if evidence is None else evidence,
        action_id=action.pk,
    )


def _prepare(
    scope: Scope,
    action: PreparedAction,
    tickets: list[ReviewTicket],
    extra_counters: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Check, dry-run and store an unsaved action; returns the common part of the answer."""
    check_fresh(tickets)
    action.workspace_id = scope.workspace_id
    action.actor_id = scope.actor_id
    kind = _kind(action)
    action.collection_ids = _collections_touched(scope, action, tickets)
    v.json_object("arguments", {"a": action.arguments}, max_bytes=2_000_000)
    action.evidence = [ticket_evidence(t) for t in tickets]
    try:
        with transaction.atomic():
            raise _Rollback(kind.apply(_ctx(action), action))
    except _Rollback as dry_run:
        action.preview = dry_run.preview
    counters: dict[str, int] = dict(extra_counters or {})
    for ticket in tickets:
        counters.update(ticket.counters)
    now = timezone.now()
    action.counters = counters
    action.created_at = now
    action.expires_at = now + ACTION_LIFETIME
    action.save()
    return {
        "action_id": action.pk,
        "preview": action.preview,
        "preview_note": "IDs and timestamps of new objects are provisional; use those that "
        f"{kind.commit_tool} returns.",
        # A forecast: commit decides again from the data as it is then.
        "requires_human_approval": approval.decide(
            scope.workspace_id, action.collection_ids, actor=approval.AGENT
        ).hold,
        "expires_at": action.expires_at.isoformat(),
    }


def _outcome(action: PreparedAction, *, replayed: bool) -> dict[str, Any]:
    base = {"action_id": action.pk, "operation": action.operation}
    if action.state == PreparedAction.COMMITTED:
        if action.result is None:
            # anchor_purge removed the stored result after its retention; nothing is applied.
            raise _result_purged(action)
        return {
            "status": "committed",
            **base,
            "replayed": replayed,
            "result": action.result,
            "committed_at": action.decided_at.isoformat() if action.decided_at else None,
        }
    if action.state == PreparedAction.AWAITING_APPROVAL:
        return {
            "status": "awaiting_approval",
            **base,
            "message": "A collection this write touches needs a person's approval. Nothing is "
            "written yet; tell the user it awaits review in the admin, and call the same commit "
            "tool with this action_id later to read the decision. Do not prepare it again.",
        }
    if action.state == PreparedAction.REJECTED:
        return {
            "status": "rejected",
            **base,
            "rejected_by": action.decided_by,
            "reason": action.decision_note,
            "message": "A person rejected this write; nothing was written. Tell the user and "
            "do not retry it unchanged.",
        }
    raise AssertionError(f"no outcome for state {action.state}")


def _result_purged(action: PreparedAction) -> AnchorError:
    committed_at = action.decided_at.isoformat() if action.decided_at else None
    return AnchorError(
        NOT_FOUND,
        f"Action {action.pk} was committed at {committed_at}; its stored result has since been "
        "purged (it is kept for ANCHOR_ACTION_RESULT_RETENTION_DAYS), so it cannot be replayed. "
        "It is not applied again: read the current state instead of preparing it anew.",
        action_id=action.pk,
        committed=True,
        committed_at=committed_at,
    )


def _stale(action: PreparedAction, message: str, **details: Any) -> AnchorError:
    return AnchorError(STALE_REVIEW, message, action_id=action.pk, **details)


def _parse_action_id(action_id: Any) -> str:
    if not is_valid_id(action_id):
        raise invalid("action_id", f"{action_id!r} is not an action_id from a prepare tool.")
    return str(action_id)


def _recheck(
    action: PreparedAction, scope: Scope, *, check_expiry: bool = True
) -> list[ReviewTicket]:
    """Lock the counters the action relies on and refuse it if any review went stale.

    Runs inside the caller's transaction; returns the cited tickets for the evidence checks.
    """
    current = lock_counters(action.workspace_id, action.counters)
    tickets = load_tickets(scope, action.review_ids)
    try:
        check_fresh(tickets, current, check_expiry=check_expiry)
    except AnchorError as exc:
        raise _stale(action, exc.message, **exc.details) from exc
    moved = moved_counters(action.counters, current)
    if moved:
        raise _stale(
            action,
            f"{', '.join(moved)} changed since this action was prepared; "
            "review again and prepare a new action.",
            changed=moved,
        )
    return tickets


def _collections_touched(
    scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]
) -> list[str]:
    """Check the action's evidence and name every collection its write touches, as of now."""
    touched = _kind(action).check(scope, action, tickets)
    return approval.collections_touched(action.workspace_id, touched)


def _decide(action: PreparedAction, scope: Scope, *, actor: str) -> approval.Decision:
    """Every commit-time check, then the approval policy on what the write touches now.

    Runs inside the caller's transaction. Records, links and gates may have changed since
    prepare, so the touched collections are recomputed and stored with the action, and their
    gates stay as read until the write lands. A person's review may take longer than a ticket
    lives; what it depends on must still be unchanged.
    """
    approval.hold_gates_steady(action.workspace_id, action.collection_ids)  # before counters
    tickets = _recheck(action, scope, check_expiry=actor == approval.AGENT)
    action.collection_ids = _collections_touched(scope, action, tickets)
    return approval.decide(action.workspace_id, action.collection_ids, actor=actor)


def _apply(action: PreparedAction, *, approved_by: str = "") -> dict[str, Any]:
    """Apply a decided action inside the caller's transaction."""
    evidence = list(action.evidence)
    if approved_by:
        evidence.append({"approved_by": approved_by, "approved_at": timezone.now().isoformat()})
    return _kind(action).apply(_ctx(action, evidence), action)


def _mark_stale(action_id: str) -> None:
    PreparedAction.objects.filter(
        pk=action_id, state__in=[PreparedAction.PREPARED, PreparedAction.AWAITING_APPROVAL]
    ).update(state=PreparedAction.STALE, decided_at=timezone.now())


def _commit(
    scope: Scope,
    action_id: Any,
    *,
    tool: str,
    before_apply: Callable[[PreparedAction], None] | None = None,
) -> dict[str, Any]:
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
            if _kind(action).commit_tool != tool:
                raise invalid(
                    "action_id",
                    f"this is a {action.operation} action; commit it "
                    f"with {_kind(action).commit_tool}.",
                )
            if action.state == PreparedAction.STALE:
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
            if before_apply is not None:
                before_apply(action)
            # Checked in full before holding, so a stale action is refused at once, not after
            # a person's wait.
            if _decide(action, scope, actor=approval.AGENT).hold:
                action.state = PreparedAction.AWAITING_APPROVAL
                action.save(update_fields=["state", "arguments", "collection_ids"])
                return _outcome(action, replayed=False)
            action.result = _apply(action)
            action.state = PreparedAction.COMMITTED
            action.decided_at = timezone.now()
            action.save(
                update_fields=["result", "state", "decided_at", "collection_ids", "arguments"]
            )
            return _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in FINAL_ERRORS:
            _mark_stale(action_id)
        raise


# --- single writes -----------------------------------------------------------------------------


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
    action = PreparedAction(
        operation=op.name,
        arguments=args,
        review_ids=ids,
        decision_reason=v.description(decision_reason, "decision_reason"),
        clarification=clarification_text(clarification),
    )
    answer = _prepare(scope, action, load_tickets(scope, ids))
    v.json_object("arguments", args)  # fields are checked first so errors name the field
    return {"operation": op.name, **answer}


def commit_write(scope: Scope, *, action_id: Any) -> dict[str, Any]:
    return _commit(scope, action_id, tool="commit_write")


# --- batches -------------------------------------------------------------------------------------


def _batch_items(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_BATCH_ITEMS:
        raise invalid("actions", f"must be a list of 1-{MAX_BATCH_ITEMS} actions.")
    items = []
    for index, raw in enumerate(value):
        field = f"actions[{index}]"
        allowed = {"operation", "arguments", "review_ids", "decision_reason", "clarification"}
        if not isinstance(raw, dict) or set(raw) - allowed:
            raise invalid(field, f"must be an object with keys {sorted(allowed)}.")
        if raw.get("operation") not in BATCH_OPERATIONS:
            raise invalid(
                f"{field}.operation",
                f"{raw.get('operation')!r} is not allowed in a batch; use one of "
                f"{list(BATCH_OPERATIONS)} (creation and collection changes go "
                "through prepare_write).",
            )
        try:
            op, args = parse_operation(raw["operation"], raw.get("arguments"))
            v.json_object("arguments", args)
            ids = parse_review_ids(raw.get("review_ids"))
            reason = v.description(raw.get("decision_reason"), "decision_reason")
            said = clarification_text(raw.get("clarification"))
        except AnchorError as exc:
            raise AnchorError(
                exc.code, f"{field}.{exc.message}", item_index=index, **exc.details
            ) from exc
        items.append(
            {
                "index": index,
                "operation": op.name,
                "arguments": args,
                "review_ids": ids,
                "decision_reason": reason,
                "clarification": said,
            }
        )
    return items


def prepare_batch_write(scope: Scope, *, actions: Any) -> dict[str, Any]:
    items = _batch_items(actions)
    ids: list[str] = []
    for item in items:
        ids.extend(r for r in item["review_ids"] if r not in ids)
    action = PreparedAction(
        operation=BATCH,
        arguments={"items": items},
        review_ids=ids,
        decision_reason="; ".join(f"[{i['index']}] {i['decision_reason']}" for i in items)[:2000],
        clarification="",
    )
    return _prepare(scope, action, load_tickets(scope, ids))


def commit_batch_write(scope: Scope, *, action_id: Any) -> dict[str, Any]:
    return _commit(scope, action_id, tool="commit_batch_write")


# --- imports -------------------------------------------------------------------------------------


def prepare_import(
    scope: Scope,
    *,
    collection_id: Any,
    rows: Any,
    decision_reason: Any,
    links: Any = None,
    review_ids: Any = None,
    clarification: Any = None,
) -> dict[str, Any]:
    reason = v.description(decision_reason, "decision_reason")
    collection, parsed_rows, parsed_links = imports.parse_import(
        scope, {"collection_id": collection_id, "rows": rows, "links": links}
    )
    ids = parse_review_ids(review_ids) if review_ids else []
    tickets = load_tickets(scope, ids)
    reviewed, revision = imports.review_rows(scope.workspace_id, collection.pk, parsed_rows)
    action = PreparedAction(
        operation=imports.OPERATION,
        arguments={
            "collection_id": collection.pk,
            "rows": parsed_rows,
            "links": parsed_links,
            "reviewed": reviewed,
            "decisions": None,
        },
        review_ids=ids,
        decision_reason=reason,
        clarification=clarification_text(clarification),
    )
    # Stale if any name in the collection changes before commit.
    names = {imports.names_key(collection.pk): revision}
    answer = _prepare(scope, action, tickets, extra_counters=names)
    needs_decision = [r["key"] for r in reviewed if r["status"] != imports.CLEAN]
    return {
        "collection_id": collection.pk,
        "rows": reviewed,
        "needs_decision": needs_decision,
        **answer,
    }


def commit_import(scope: Scope, *, action_id: Any, decisions: Any = None) -> dict[str, Any]:
    def decide(action: PreparedAction) -> None:
        action.arguments = {
            **action.arguments,
            "decisions": imports.parse_decisions(decisions, action.arguments["reviewed"]),
        }

    return _commit(scope, action_id, tool="commit_import", before_apply=decide)


# --- people decide -------------------------------------------------------------------------------


def _pending(action_id: Any) -> PreparedAction:
    action_id = _parse_action_id(action_id)
    action = PreparedAction.objects.select_for_update().filter(pk=action_id).first()
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
            # The same rechecks as a commit; the person approving is the approval.
            _decide(action, scope, actor=approval.PERSON)
            action.result = _apply(action, approved_by=reviewer)
            action.state = PreparedAction.COMMITTED
            action.decided_by = reviewer
            action.decided_at = timezone.now()
            action.save(
                update_fields=["result", "state", "decided_by", "decided_at", "collection_ids"]
            )
            return _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in FINAL_ERRORS:
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
