"""Prepared actions: an exact write, previewed, then applied after the server's rechecks.

Three kinds share one lifecycle: a single operation (prepare_write), a batch of existing-record
operations (prepare_batch_write) and a reviewed import (prepare_import). Prepare validates the
real mutation inside a savepoint that is always rolled back, so it leaves nothing behind
(triggers fire and are undone with it). Commit claims the action row, locks the revision
counters its reviews depend on, rechecks everything, applies the write and stores the result in
one transaction; replaying a committed action returns that stored result. The states an action
moves through, and what moves it, are drawn at workflow.models.ActionState.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from records import approval
from records import validation as v
from records.approval import Touched
from records.counters import lock_counters, moved_counters, names_key
from records.dry_run import counters_left_alone
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
from records.names import normalize_name
from records.services import WriteContext, lock_records, written_records
from workflow import imports, knock_on
from workflow.decision_audit import APPROVED, REJECTED, STALE, audit_decision
from workflow.freshness import check_fresh, ensure_fresh, warm
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket
from workflow.names.cache import scope_names
from workflow.operations import batch_operation_names, operation_named, parse_operation
from workflow.operations.checks import created_earlier, read_together
from workflow.operations.registry import ApplyManyFn, Names, Operation
from workflow.resolution import resolve_by_ids
from workflow.scope import Scope
from workflow.stale_reasons import plain_stale_reason
from workflow.tickets import (
    TICKET_LIFETIME,
    another_actors,
    clarification_text,
    load_tickets,
    parse_review_ids,
    ticket_evidence,
)

ACTION_LIFETIME = TICKET_LIFETIME
BATCH = "batch"
REFERENCE_KEYS = ("source_id", "target_id")  # the link ends that may name "actions[N]"
MAX_BATCH_ITEMS = 10
# At most this many waiting writes an agent's commit may have made stale are checked after it
# (the rest when a person opens them or approves them).
SWEEP_AFTER_AGENT_COMMIT = 20
# Who is named on a stale write's audit events: no person decided it.
STALE_CHECK = "anchor (stale check)"
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
    # (action, moved counters) -> what changed in the action's own review, beyond its tickets
    own_changes: Callable[[PreparedAction, list[str]], list[str]] | None = None


def _still_defined(action: PreparedAction, name: str) -> Operation:
    """The definition of a stored action's operation. An action can outlive its operation (an
    upgrade retired it): it can then never be applied as prepared, so it is stale."""
    try:
        return operation_named(name)
    except LookupError:
        raise _stale(
            action,
            f"The operation {name!r} no longer exists in this version of Anchor, so this write "
            "cannot be applied as prepared. Prepare it again with a current operation.",
            operation=name,
        ) from None


def _single_check(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
    op = _still_defined(action, action.operation)
    return op.check(scope, action.arguments, tickets, action.clarification)


def _single_apply(ctx: WriteContext, action: PreparedAction) -> dict[str, Any]:
    return operation_named(action.operation).apply(ctx, action.arguments)


def _batch_check(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> Touched:
    by_id = {t.pk: t for t in tickets}
    touched = approval.NOTHING
    created: dict[tuple[Any, str], int] = {}  # (collection, normalized title) -> item index
    items = action.arguments["items"]
    with read_together(scope.workspace_id, _records_named(items)):
        for item in items:
            op = _still_defined(action, item["operation"])
            item_tickets = [by_id[r] for r in item["review_ids"]]
            try:
                check = op.check(scope, item["arguments"], item_tickets, item["clarification"])
                if op.creates_a_record:
                    _one_creation_per_name(item, created)
            except AnchorError as exc:
                raise AnchorError(
                    exc.code,
                    f"actions[{item['index']}]: {exc.message}",
                    item_index=item["index"],
                    **exc.details,
                ) from exc
            touched |= check  # every item, every endpoint
    return touched


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


def _with_created(args: dict[str, Any], made: dict[int, str]) -> dict[str, Any]:
    """The item's arguments with each "actions[N]" end replaced by the record item N made."""
    return {
        key: made[index]
        if key in REFERENCE_KEYS and (index := created_earlier(value)) in made
        else value
        for key, value in args.items()
    }


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
) -> dict[str, Any]:
    """A batch of one operation on distinct records (an agenda's outcomes) in one go: the
    same rows and refusals as item by item, in a handful of statements instead of several an
    item."""
    try:
        results = apply_many([(_item_ctx(ctx, i), i["arguments"]) for i in items])
    except AnchorError as exc:
        details = dict(exc.details)
        index = items[details.pop("update_index")]["index"]
        raise AnchorError(
            exc.code, f"actions[{index}]: {exc.message}", item_index=index, **details
        ) from exc
    return {
        "items": [
            {"item_index": i["index"], "operation": i["operation"], **result}
            for i, result in zip(items, results, strict=True)
        ]
    }


def _batch_apply(ctx: WriteContext, action: PreparedAction) -> dict[str, Any]:
    items = action.arguments["items"]
    names = {i["operation"] for i in items}
    apply_many = operation_named(names.pop()).apply_many if len(names) == 1 else None
    records = [i["arguments"].get("record_id") for i in items]
    if apply_many is not None and len(items) > 1 and len(set(records)) == len(records):
        return _apply_many(ctx, items, apply_many)
    results = []
    made: dict[int, str] = {}  # item index -> the record a creating item made
    # All at once, by ID: locked item by item, two batches naming the same records in
    # different orders could deadlock.
    lock_records(ctx, _records_named(items))
    for item in items:
        item_ctx = _item_ctx(ctx, item)
        try:
            arguments = _with_created(item["arguments"], made)
            result = operation_named(item["operation"]).apply(item_ctx, arguments)
        except AnchorError as exc:
            raise AnchorError(
                exc.code,
                f"actions[{item['index']}]: {exc.message}",
                item_index=item["index"],
                **exc.details,
            ) from exc
        if operation_named(item["operation"]).creates_a_record:
            made[item["index"]] = result["record"]["record_id"]
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


def _import_own_changes(action: PreparedAction, moved: list[str]) -> list[str]:
    """The rows' duplicate review, redone when a name in their collection changed."""
    if names_key(action.arguments["collection_id"]) not in moved:
        return []
    return imports.review_changes(action.workspace_id, action.arguments)


SINGLE = Kind(_single_check, _single_apply, "commit_write")
KINDS = {
    BATCH: Kind(_batch_check, _batch_apply, "commit_batch_write"),
    imports.OPERATION: Kind(
        _import_check, _import_apply, "commit_import", own_changes=_import_own_changes
    ),
}


def _kind(action: PreparedAction) -> Kind:
    return KINDS.get(action.operation, SINGLE)


# --- shared lifecycle --------------------------------------------------------------------------


def _ctx(action: PreparedAction, evidence: list[Any] | None = None) -> WriteContext:
    return WriteContext(
        workspace_id=action.workspace_id,
        actor_id=action.actor_id,
        credential=action.credential,
        credential_name=action.credential_name,
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
    # The values at which every cited review is known to hold: commit re-evaluates a review
    # only when one of them has moved since.
    valid_at = check_fresh(tickets)
    action.workspace_id = scope.workspace_id
    action.actor_id = scope.actor_id
    action.credential = scope.credential
    action.credential_name = scope.credential_name
    kind = _kind(action)
    action.collection_ids = _collections_touched(scope, action, tickets)
    v.json_object("arguments", {"a": action.arguments}, max_bytes=2_000_000)
    action.evidence = [ticket_evidence(t) for t in tickets]
    try:
        with transaction.atomic(), counters_left_alone():
            raise _Rollback(kind.apply(_ctx(action), action))
    except _Rollback as dry_run:
        action.preview = dry_run.preview
    counters = dict(valid_at)
    for key, value in (extra_counters or {}).items():
        # Shared with a review: the older value, so commit re-checks both reviews if needed.
        counters[key] = min(value, counters.get(key, value))
    now = timezone.now()
    action.counters = counters
    action.created_at = now
    # The real deadline: a commit after a cited review expired would be refused anyway.
    action.expires_at = min([now + ACTION_LIFETIME, *(t.expires_at for t in tickets)])
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
    if action.state == ActionState.COMMITTED:
        if action.result is None:
            # anchor_purge removed the stored result after its retention; nothing is applied.
            raise _result_purged(action)
        approval_part = {"approved_by": action.decided_by, "approval_note": action.decision_note}
        return {
            "status": "committed",
            **base,
            "replayed": replayed,
            "result": action.result,
            "committed_at": action.decided_at.isoformat() if action.decided_at else None,
            **(approval_part if action.decided_by else {}),
        }
    if action.state == ActionState.AWAITING_APPROVAL:
        return {
            "status": "awaiting_approval",
            **base,
            "message": "A collection this write touches needs a person's approval. Nothing is "
            "written yet; tell the user it awaits review in the admin, and call the same commit "
            "tool with this action_id later to read the decision. Do not prepare it again.",
        }
    if action.state == ActionState.REJECTED:
        return {
            "status": "rejected",
            **base,
            "rejected_by": action.decided_by,
            "rejected_at": action.decided_at.isoformat() if action.decided_at else None,
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
    """Lock the counters the action relies on and refuse it if any review's answer changed.

    A moved counter is not enough: each review that depends on one is re-evaluated, under the
    locks, and refused only if its answer differs (freshness.ensure_fresh); so is an import's
    own duplicate review. Runs inside the caller's transaction; returns the cited tickets for
    the evidence checks.
    """
    current = lock_counters(action.workspace_id, action.counters)
    tickets = load_tickets(scope, action.review_ids)
    try:
        ensure_fresh(tickets, current, baseline=action.counters, check_expiry_too=check_expiry)
    except AnchorError as exc:
        raise _stale(action, exc.message, **exc.details) from exc
    own_changes = _kind(action).own_changes
    moved = moved_counters(action.counters, current)
    changes = own_changes(action, moved) if moved and own_changes else []
    if changes:
        shown = "; ".join(changes[:5]) + (
            f"; and {len(changes) - 5} more" if len(changes) > 5 else ""
        )
        raise _stale(
            action,
            f"The review this action made changed since it was prepared ({shown}); "
            "review again and prepare a new action.",
            changed=moved,
            changes=changes,
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
    held = approval.hold_gates_steady(action.workspace_id, action.collection_ids)  # first
    tickets = _recheck(action, scope, check_expiry=actor == approval.AGENT)
    action.collection_ids = _collections_touched(scope, action, tickets)
    decision = approval.decide(action.workspace_id, action.collection_ids, actor=actor, held=held)
    return decision


def _apply(action: PreparedAction, *, approved_by: str = "") -> dict[str, Any]:
    """Apply a decided action inside the caller's transaction."""
    evidence = list(action.evidence)
    if approved_by:
        evidence.append({"approved_by": approved_by, "approved_at": timezone.now().isoformat()})
    ctx = _ctx(action, evidence)
    kind = _kind(action)
    if approved_by and kind is SINGLE:
        op = operation_named(action.operation)
        if op.rebase is not None:  # a person's edit of other fields leaves this write valid
            return op.apply(ctx, op.rebase(action.workspace_id, action.arguments))
    return kind.apply(ctx, action)


def _mark_stale(action_id: str, exc: AnchorError, *, told: str = "", reason: str = "") -> None:
    """`told`: the agent whose own commit found it stale and read why in the reply; nobody
    else needs telling, so it is not listed for a person's attention (workflow.attention)."""
    pending = PreparedAction.objects.filter(pk=action_id, state__in=OPEN_STATES)
    action = pending.first()
    if action is not None:
        now = timezone.now()
        seen = {
            "dismissed_by": f"{told} (told when it committed)",
            "dismissed_at": now,
            "agent_told_at": now,
        }
        action.stale_reason = reason or plain_stale_reason(action.workspace_id, exc)
        action.state = ActionState.STALE
        pending.update(
            state=action.state,
            decided_at=now,
            stale_reason=action.stale_reason,
            **(seen if told else {}),
        )
        if not told:  # the agent hears of it in the change feed (and its digest)
            audit_decision(action, kind=STALE, reviewer=STALE_CHECK, note=action.stale_reason)


def _warm(scope: Scope, action_id: str) -> None:
    """Reload, before the write lock, the names a moved review or import will be checked on."""
    action = PreparedAction.objects.filter(
        pk=action_id,
        workspace_id=scope.workspace_id,
        actor_id=scope.actor_id,
        state__in=OPEN_STATES,
    ).first()
    if action is None:
        return
    tickets = list(
        ReviewTicket.objects.filter(pk__in=action.review_ids, workspace_id=scope.workspace_id)
    )
    warm(tickets, action.counters)
    if action.operation == imports.OPERATION:
        scope_names(action.workspace_id, action.arguments["collection_id"])


def _missing_action(scope: Scope, action_id: str) -> AnchorError:
    foreign = PreparedAction.objects.filter(pk=action_id, workspace_id=scope.workspace_id)
    return (
        another_actors("action", action_id, "action_id")
        if foreign.exists()
        else not_found("action", action_id)
    )


def _commit(
    scope: Scope,
    action_id: Any,
    *,
    tool: str,
    before_apply: Callable[[PreparedAction], None] | None = None,
) -> dict[str, Any]:
    action_id = _parse_action_id(action_id)
    _warm(scope, action_id)
    try:
        with transaction.atomic():
            action = (
                PreparedAction.objects.select_for_update()
                .filter(pk=action_id, workspace_id=scope.workspace_id, actor_id=scope.actor_id)
                .first()
            )
            if action is None:
                raise _missing_action(scope, action_id)
            if _kind(action).commit_tool != tool:
                raise invalid(
                    "action_id",
                    f"this is a {action.operation} action; commit it "
                    f"with {_kind(action).commit_tool}.",
                )
            if action.state == ActionState.STALE:
                raise _stale(
                    action,
                    "This action went stale before it was committed"
                    + (f": {action.stale_reason}" if action.stale_reason else ".")
                    + " Retrieve current state, review again and prepare a new action.",
                    stale_reason=action.stale_reason,
                )
            if action.state != ActionState.PREPARED:
                if action.state == ActionState.REJECTED and action.agent_told_at is None:
                    PreparedAction.objects.filter(pk=action.pk).update(agent_told_at=timezone.now())
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
            decision = _decide(action, scope, actor=approval.AGENT)
            if decision.hold:
                action.state = ActionState.AWAITING_APPROVAL
                action.save(update_fields=["state", "arguments", "collection_ids"])
                return _outcome(action, replayed=False)
            landed = knock_on.watch(action)
            with written_records() as written:
                action.result = _apply(action)
            landed.finish(written)
            action.state = ActionState.COMMITTED
            action.decided_at = timezone.now()
            action.save(
                update_fields=["result", "state", "decided_at", "collection_ids", "arguments"]
            )
            cause = f"The agent's write {action.pk} ({action.operation})"
            transaction.on_commit(
                lambda: mark_stale_after(landed, cause, limit=SWEEP_AFTER_AGENT_COMMIT)
            )
            return _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in FINAL_ERRORS:
            _mark_stale(action_id, exc, told=scope.actor_id)
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
    answer = _prepare(scope, action, load_tickets(scope, ids))
    v.json_object("arguments", args)  # fields are checked first so errors name the field
    return {"operation": op.name, **answer}


def commit_write(scope: Scope, *, action_id: Any) -> dict[str, Any]:
    outcome = _commit(scope, action_id, tool="commit_write")
    review = follow_up_review(scope, outcome)
    return {**outcome, "review": review} if review else outcome


def follow_up_review(scope: Scope, outcome: dict[str, Any]) -> dict[str, Any] | None:
    """A fresh review of what a committed write made, so the next write can cite it at once.

    Issued after the write transaction (also on replay, so a lost reply still gets one), by the
    operations that define one: a resolution of a created record, a discovery of a created (or
    reused) collection.
    """
    if outcome["status"] != "committed":
        return None
    follow_up = operation_named(outcome["operation"]).follow_up
    return follow_up(scope, outcome["result"]) if follow_up else None


# --- batches -------------------------------------------------------------------------------------


def _batch_items(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_BATCH_ITEMS:
        raise invalid("actions", f"must be a list of 1-{MAX_BATCH_ITEMS} actions.")
    items: list[dict[str, Any]] = []
    for index, raw in enumerate(value):
        field = f"actions[{index}]"
        allowed = {"operation", "arguments", "review_ids", "decision_reason", "clarification"}
        if not isinstance(raw, dict) or set(raw) - allowed:
            raise invalid(field, f"must be an object with keys {sorted(allowed)}.")
        batchable = batch_operation_names()
        if raw.get("operation") not in batchable:
            raise invalid(
                f"{field}.operation",
                f"{raw.get('operation')!r} is not allowed in a batch; use one of "
                f"{list(batchable)} (collection changes go through prepare_write).",
            )
        try:
            op, args = parse_operation(raw["operation"], raw.get("arguments"))
            v.json_object("arguments", args)
            all_created = _check_references(op, args, items)
            ids = (
                []
                if all_created and not raw.get("review_ids")
                else parse_review_ids(raw.get("review_ids"))
            )
            reason = v.description(raw.get("decision_reason"), "decision_reason")
            said = clarification_text(raw.get("clarification"))
        except AnchorError as exc:
            inner = exc.details.get("field")
            details = {**exc.details, **({"field": f"{field}.{inner}"} if inner else {})}
            raise AnchorError(
                exc.code, f"{field}.{exc.message}", **{**details, "item_index": index}
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
    outcome = _commit(scope, action_id, tool="commit_batch_write")
    if outcome["status"] != "committed":
        return outcome
    # Each created record's review, as commit_write gives one, so the next write cites it.
    items = []
    for item in outcome["result"]["items"]:
        follow_up = operation_named(item["operation"]).follow_up
        review = follow_up(scope, item) if follow_up else None
        items.append({**item, "review": review} if review else item)
    return {**outcome, "result": {**outcome["result"], "items": items}}


def prepare_tool_batch(scope: Scope, items: list[dict[str, Any]], collection_ids: list[str]) -> str:
    """Store a batch one tool composed of its own writes (agenda sync), for commit_batch_write.

    Items are shaped as _batch_items leaves them, each citing its own review. Unlike
    prepare_batch_write there is no item cap and no preview (nobody reads one) and the checks
    are left to the commit, which runs every one of them under its locks anyway.
    """
    ids = list(dict.fromkeys(r for item in items for r in item["review_ids"]))
    tickets = load_tickets(scope, ids)
    now = timezone.now()
    action = PreparedAction.objects.create(
        workspace_id=scope.workspace_id,
        actor_id=scope.actor_id,
        operation=BATCH,
        arguments={"items": items},
        review_ids=ids,
        decision_reason="; ".join(f"[{i['index']}] {i['decision_reason']}" for i in items)[:2000],
        evidence=[ticket_evidence(t) for t in tickets],
        counters=check_fresh(tickets),
        collection_ids=collection_ids,
        created_at=now,
        expires_at=min([now + ACTION_LIFETIME, *(t.expires_at for t in tickets)]),
    )
    return action.pk


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
    names = {names_key(collection.pk): revision}
    answer = _prepare(scope, action, tickets, extra_counters=names)
    needs_decision = [r["key"] for r in reviewed if r["status"] != imports.CLEAN]
    return {
        "collection_id": collection.pk,
        "rows": reviewed,
        "needs_decision": needs_decision,
        **answer,
    }


def commit_import(
    scope: Scope,
    *,
    action_id: Any,
    decisions: Any = None,
    confirmed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Commit an import; `confirmed` holds the rows the user decided in the client."""

    def decide(action: PreparedAction) -> None:
        reviewed = action.arguments["reviewed"]
        action.arguments = {
            **action.arguments,
            "decisions": imports.parse_decisions(decisions, reviewed, confirmed),
        }

    outcome = _commit(scope, action_id, tool="commit_import", before_apply=decide)
    if outcome["status"] != "committed":
        return outcome
    # A review of every row's record, issued after the write (also on replay, as commit_write
    # does), so a follow-up link cites them at once.
    rows = outcome["result"]["rows"]
    named = [row["record_id"] for row in rows.values() if row.get("record_id")]
    reviews = resolve_by_ids(scope, list(dict.fromkeys(named)))
    with_reviews = {
        key: {**row, "resolution_id": reviews[row["record_id"]]} if row.get("record_id") else row
        for key, row in rows.items()
    }
    return {**outcome, "result": {**outcome["result"], "rows": with_reviews}}


# --- people decide -------------------------------------------------------------------------------


def _pending(action_id: Any) -> PreparedAction:
    action_id = _parse_action_id(action_id)
    action = PreparedAction.objects.select_for_update().filter(pk=action_id).first()
    if action is None:
        raise not_found("action", action_id)
    if action.state == ActionState.STALE:
        # Marked stale as soon as another write made it so: say why, in plain words.
        reason = action.stale_reason or "a review it relied on changed."
        raise AnchorError(
            STALE_REVIEW,
            f"Action {action_id} went stale before anyone approved it: {reason}",
            state=action.state,
            stale_reason=action.stale_reason,
        )
    if action.state != ActionState.AWAITING_APPROVAL:
        raise AnchorError(
            AWAITING_APPROVAL,
            f"Action {action_id} is {action.state}, not awaiting approval.",
            state=action.state,
        )
    return action


def approve_prepared_action(
    *, action_id: Any, reviewer: str, note: str = "", described: str = ""
) -> dict[str, Any]:
    """A person approves: the same rechecks as commit (stale is refused), then apply.

    `described`: the write in words ("archive Rahul Mehta"), for the reason given on the
    waiting writes this approval makes stale."""
    note = v.description(note, "note", allow_blank=True)
    pending = (
        PreparedAction.objects.filter(pk=str(action_id)).first() if is_valid_id(action_id) else None
    )
    if pending is not None:
        _warm(Scope(pending.workspace_id, pending.actor_id), pending.pk)
    try:
        with transaction.atomic():
            action = _pending(action_id)
            scope = Scope(action.workspace_id, action.actor_id)
            # The same rechecks as a commit; the person approving is the approval.
            _decide(action, scope, actor=approval.PERSON)
            landed = knock_on.watch(action)
            with written_records() as written:
                action.result = _apply(action, approved_by=reviewer)
            landed.finish(written)
            action.state = ActionState.COMMITTED
            action.decided_by = reviewer
            action.decision_note = note
            action.decided_at = timezone.now()
            action.save(
                update_fields=[
                    "result",
                    "state",
                    "decided_by",
                    "decision_note",
                    "decided_at",
                    "collection_ids",
                ]
            )
            audit_decision(action, kind=APPROVED, reviewer=reviewer, note=note)
            outcome = _outcome(action, replayed=False)
    except AnchorError as exc:
        if exc.code in FINAL_ERRORS:
            _mark_stale(str(action_id), exc)
        raise
    # What this write made stale says so at once, and says it was this approval.
    mark_stale_after(landed, _approving(action, described))
    return outcome


def _approving(action: PreparedAction, described: str) -> str:
    return f"Approving “{described}”" if described else f"Approving write {action.pk}"


def stale_if_approved(action_id: str, *, described: str = "") -> list[tuple[str, str]]:
    """(action ID, stale reason) of each waiting write approving `action_id` would make stale,
    found as the approval finds them, then all rolled back. Empty when it would not apply."""
    found: list[tuple[str, str]] = []
    try:
        with transaction.atomic():
            action = _pending(action_id)
            _decide(action, Scope(action.workspace_id, action.actor_id), actor=approval.PERSON)
            landed = knock_on.watch(action)
            with written_records() as written:
                _apply(action, approved_by="dry run")
            landed.finish(written)
            cause = _approving(action, described)
            candidates = knock_on.candidates(landed, exclude=action.pk)
            for other in PreparedAction.objects.filter(pk__in=candidates):
                error = _still_applies(other)
                if error is not None:
                    found.append((other.pk, _caused(cause, other, error)))
            raise _Rollback({})
    except (_Rollback, AnchorError):
        return found


def reject_prepared_action(*, action_id: Any, reviewer: str, reason: str) -> dict[str, Any]:
    note = v.description(reason, "reason")
    with transaction.atomic():
        action = _pending(action_id)
        action.state = ActionState.REJECTED
        action.decided_by = reviewer
        action.decision_note = note
        action.decided_at = timezone.now()
        action.save(update_fields=["state", "decided_by", "decision_note", "decided_at"])
        audit_decision(action, kind=REJECTED, reviewer=reviewer, note=note)
        return _outcome(action, replayed=False)


def mark_stale_pending(workspace_id: str, action_ids: list[str] | None = None) -> list[str]:
    """Try every write awaiting approval (or those of `action_ids`) as an approval would, and
    roll back; the ones that can no longer apply are marked stale with the reason.

    For what a person opens (a pending write, the record it names, the dashboard: a bounded
    few), so a write that went stale through a change no sweep followed (a person's edit in the
    admin) says so before anyone tries to approve it. After a write, mark_stale_after checks
    only what that write may have changed.
    """
    waiting = PreparedAction.objects.filter(
        workspace_id=workspace_id, state=ActionState.AWAITING_APPROVAL
    )
    if action_ids is not None:
        waiting = waiting.filter(pk__in=action_ids)
    ordered = waiting.order_by("created_at")
    stale = []
    for action in ordered:
        error = _still_applies(action)
        if error is not None:
            _mark_stale(action.pk, error)
            stale.append(action.pk)
    return stale


def _still_applies(action: PreparedAction) -> AnchorError | None:
    """Try a waiting write as an approval would, and roll back: the final refusal, if any."""
    try:
        with transaction.atomic():
            _decide(action, Scope(action.workspace_id, action.actor_id), actor=approval.PERSON)
            raise _Rollback(_apply(action, approved_by="dry run"))
    except _Rollback:
        return None
    except AnchorError as exc:
        # Not final (e.g. a gate changed): still a person's call, not stale.
        return exc if exc.code in FINAL_ERRORS else None


def _caused(cause: str, action: PreparedAction, exc: AnchorError) -> str:
    """The stale reason naming the write that caused it, and a choice the user made."""
    users = any("user_confirmed_in_client" in e for e in action.evidence if isinstance(e, dict))
    chosen = " It undoes a choice the user confirmed in the client." if users else ""
    return f"{cause} made this write stale.{chosen} {plain_stale_reason(action.workspace_id, exc)}"


def mark_stale_after(landed: knock_on.Landed, cause: str, *, limit: int | None = None) -> list[str]:
    """After a write: check only the waiting writes it may have made stale (workflow.knock_on),
    the `limit` newest of them when given, and mark those that can no longer apply."""
    found = knock_on.candidates(landed)
    if limit is not None:
        found = found[-limit:]
    stale = []
    for action in PreparedAction.objects.filter(pk__in=found).order_by("created_at"):
        error = _still_applies(action)
        if error is not None:
            _mark_stale(action.pk, error, reason=_caused(cause, action, error))
            stale.append(action.pk)
    return stale
