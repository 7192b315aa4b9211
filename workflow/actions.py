"""Prepared actions: an exact write, previewed, then applied after the server's rechecks.

Three kinds share one lifecycle: a single operation (prepare_write), a batch of existing-record
operations (prepare_batch_write) and a reviewed import (prepare_import); what differs between
them is each kind's definition (workflow.action_kinds). Prepare validates the real mutation
inside a savepoint that is always rolled back, so it leaves nothing behind (triggers fire and
are undone with it). Commit claims the action row, locks the revision counters its reviews
depend on, rechecks everything, applies the write and stores the result in one transaction;
replaying a committed action returns that stored result. The states an action moves through,
and what moves it, are drawn at workflow.models.ActionState.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from records import approval
from records import validation as v
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
from records.services import WriteContext, written_records
from workflow import knock_on
from workflow.action_kinds import Kind, Prepared, kind_for_tool, kind_of
from workflow.action_kinds.batch import batch_action
from workflow.decision_audit import APPROVED, REJECTED, STALE, audit_decision
from workflow.freshness import a_few, check_fresh, ensure_fresh, warm
from workflow.models import OPEN_STATES, ActionState, PreparedAction, ReviewTicket
from workflow.names.cache import scope_names
from workflow.scope import Scope
from workflow.stale_reasons import plain_stale_reason
from workflow.tickets import TICKET_LIFETIME, another_actors, load_tickets, ticket_evidence

ACTION_LIFETIME = TICKET_LIFETIME
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


def _cited(scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]) -> None:
    """Who prepares the action, and the reviews it cites as they were checked."""
    for who in ("workspace_id", "actor_id", "credential", "credential_name"):
        setattr(action, who, getattr(scope, who))
    action.evidence = [ticket_evidence(t) for t in tickets]


def _store(action: PreparedAction, tickets: list[ReviewTicket], counters: dict[str, int]) -> None:
    action.counters = counters
    action.created_at = now = timezone.now()
    # The real deadline: a commit after a cited review expired would be refused anyway.
    action.expires_at = min([now + ACTION_LIFETIME, *(t.expires_at for t in tickets)])
    action.save()


def _prepare(scope: Scope, kind: Kind, prepared: Prepared) -> dict[str, Any]:
    """Check, dry-run and store an unsaved action; returns the common part of the answer."""
    action, tickets = prepared.action, prepared.tickets
    # The values at which every cited review is known to hold: commit re-evaluates a review
    # only when one of them has moved since.
    valid_at = check_fresh(tickets)
    _cited(scope, action, tickets)
    action.collection_ids = _collections_touched(scope, action, tickets)
    v.json_object("arguments", {"a": action.arguments}, max_bytes=2_000_000)
    try:
        with transaction.atomic(), counters_left_alone():
            raise _Rollback(kind.apply(_ctx(action), action, approved=False))
    except _Rollback as dry_run:
        action.preview = dry_run.preview
    if kind.max_bytes:  # after the checks and the dry run, so their errors name the field
        v.json_object("arguments", action.arguments, max_bytes=kind.max_bytes)
    # A counter its own review shares with a cited one: the older value, so commit re-checks
    # both reviews if needed.
    own = {key: min(value, valid_at.get(key, value)) for key, value in prepared.counters.items()}
    _store(action, tickets, {**valid_at, **own})
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
    decided_at = action.decided_at.isoformat() if action.decided_at else None
    if action.state == ActionState.COMMITTED:
        if action.result is None:  # anchor_purge removed it after its retention
            raise AnchorError(
                NOT_FOUND,
                f"Action {action.pk} was committed at {decided_at}; its stored result has since "
                "been purged (it is kept for ANCHOR_ACTION_RESULT_RETENTION_DAYS), so it cannot "
                "be replayed. It is not applied again: read the current state instead of "
                "preparing it anew.",
                action_id=action.pk,
                committed=True,
                committed_at=decided_at,
            )
        approval_part = {"approved_by": action.decided_by, "approval_note": action.decision_note}
        return {
            "status": "committed",
            **base,
            "replayed": replayed,
            "result": action.result,
            "committed_at": decided_at,
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
            "rejected_at": decided_at,
            "reason": action.decision_note,
            "message": "A person rejected this write; nothing was written. Tell the user and "
            "do not retry it unchanged.",
        }
    raise AssertionError(f"no outcome for state {action.state}")


def _stale(action: PreparedAction, message: str, **details: Any) -> AnchorError:
    return AnchorError(STALE_REVIEW, message, action_id=action.pk, **details)


def _refuse_stale(action: PreparedAction, lead: str, **details: Any) -> None:
    """A stale action is refused with why it went stale, in plain words."""
    if action.state == ActionState.STALE:
        reason = f": {action.stale_reason}" if action.stale_reason else "."
        raise _stale(
            action,
            f"{lead}{reason} Retrieve current state, review again and prepare a new action.",
            stale_reason=action.stale_reason,
            **details,
        )


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
    moved = moved_counters(action.counters, current)
    kind = kind_of(action.operation)
    own = kind.own_collection(action.arguments)
    changes = kind.own_changes(action) if own and names_key(own) in moved else []
    if changes:
        raise _stale(
            action,
            f"The review this action made changed since it was prepared ({a_few(changes)}); "
            "review again and prepare a new action.",
            changed=moved,
            changes=changes,
        )
    return tickets


def _collections_touched(
    scope: Scope, action: PreparedAction, tickets: list[ReviewTicket]
) -> list[str]:
    """Check the action's evidence and name every collection its write touches, as of now."""
    touched = kind_of(action.operation).check(scope, action, tickets)
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
    return approval.decide(action.workspace_id, action.collection_ids, actor=actor, held=held)


def _decide_as_person(action: PreparedAction) -> approval.Decision:
    return _decide(action, Scope(action.workspace_id, action.actor_id), actor=approval.PERSON)


def _apply_watched(
    action: PreparedAction, approved_by: str = ""
) -> tuple[dict[str, Any], knock_on.Landed]:
    """_apply, with what it changed (workflow.knock_on) for the stale sweep after it."""
    landed = knock_on.watch(action)
    with written_records() as written:
        result = _apply(action, approved_by=approved_by)
    landed.finish(written)
    return result, landed


def _apply(action: PreparedAction, *, approved_by: str = "") -> dict[str, Any]:
    """Apply a decided action inside the caller's transaction."""
    evidence = list(action.evidence)
    if approved_by:
        evidence.append({"approved_by": approved_by, "approved_at": timezone.now().isoformat()})
    ctx = _ctx(action, evidence)
    return kind_of(action.operation).apply(ctx, action, approved=bool(approved_by))


def _mark_stale(action_id: str, exc: AnchorError, *, told: str = "", reason: str = "") -> None:
    """`told`: the agent whose own commit found it stale and read why in the reply; nobody
    else needs telling, so it is not listed for a person's attention (needing_attention)."""
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


def _warm(open_action: QuerySet[PreparedAction]) -> None:
    """Reload, before the write lock, the names a moved review or import will be checked on."""
    action = open_action.filter(state__in=OPEN_STATES).first()
    if action is None:
        return
    tickets = list(
        ReviewTicket.objects.filter(pk__in=action.review_ids, workspace_id=action.workspace_id)
    )
    warm(tickets, action.counters)
    if own := kind_of(action.operation).own_collection(action.arguments):
        scope_names(action.workspace_id, own)


def _commit(
    scope: Scope, action_id: Any, kind: Kind, before_apply: Callable[[PreparedAction], None]
) -> dict[str, Any]:
    action_id = _parse_action_id(action_id)
    own = PreparedAction.objects.filter(
        pk=action_id, workspace_id=scope.workspace_id, actor_id=scope.actor_id
    )
    _warm(own)
    try:
        with transaction.atomic():
            action = own.select_for_update().first()
            if action is None:
                theirs = PreparedAction.objects.filter(
                    pk=action_id, workspace_id=scope.workspace_id
                )
                if theirs.exists():
                    raise another_actors("action", action_id, "action_id")
                raise not_found("action", action_id)
            if kind_of(action.operation) is not kind:
                raise invalid(
                    "action_id",
                    f"this is a {action.operation} action; commit it "
                    f"with {kind_of(action.operation).commit_tool}.",
                )
            _refuse_stale(action, "This action went stale before it was committed")
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
            before_apply(action)
            # Checked in full before holding, so a stale action is refused at once, not after
            # a person's wait.
            decision = _decide(action, scope, actor=approval.AGENT)
            if decision.hold:
                action.state = ActionState.AWAITING_APPROVAL
                action.save(update_fields=["state", "arguments", "collection_ids"])
                return _outcome(action, replayed=False)
            action.result, landed = _apply_watched(action)
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


# --- the tools ---------------------------------------------------------------------------------


def prepare(tool: str, scope: Scope, **arguments: Any) -> dict[str, Any]:
    """Prepare an action of the kind `tool` prepares: its definition parses the arguments."""
    kind = kind_for_tool(tool)
    prepared = kind.prepare(scope, **arguments)
    return {**prepared.head, **_prepare(scope, kind, prepared)}


def commit(tool: str, scope: Scope, *, action_id: Any, **arguments: Any) -> dict[str, Any]:
    """Commit an action of the kind `tool` commits; `arguments`: what that tool adds (an
    import's decisions, and the rows the user decided in the client as `confirmed`)."""
    kind = kind_for_tool(tool)
    outcome = _commit(scope, action_id, kind, lambda a: kind.before_commit(a, **arguments))
    return kind.after_commit(scope, outcome)


def prepare_tool_batch(scope: Scope, items: list[dict[str, Any]], collection_ids: list[str]) -> str:
    """Store a batch one tool composed of its own writes (agenda sync), for commit_batch_write.

    Items are shaped as prepare_batch_write's are, each citing its own review. Unlike
    prepare_batch_write there is no item cap and no preview (nobody reads one) and the checks
    are left to the commit, which runs every one of them under its locks anyway.
    """
    action = batch_action(items)
    tickets = load_tickets(scope, action.review_ids)
    _cited(scope, action, tickets)
    action.collection_ids = collection_ids
    _store(action, tickets, check_fresh(tickets))
    return action.pk


prepare_write = partial(prepare, "prepare_write")
commit_write = partial(commit, "commit_write")
prepare_batch_write = partial(prepare, "prepare_batch_write")
commit_batch_write = partial(commit, "commit_batch_write")
prepare_import = partial(prepare, "prepare_import")
commit_import = partial(commit, "commit_import")


# --- people decide -------------------------------------------------------------------------------


def _pending(action_id: Any) -> PreparedAction:
    action_id = _parse_action_id(action_id)
    action = PreparedAction.objects.select_for_update().filter(pk=action_id).first()
    if action is None:
        raise not_found("action", action_id)
    _refuse_stale(action, f"Action {action_id} went stale before anyone approved it", state="stale")
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
    if is_valid_id(action_id):
        _warm(PreparedAction.objects.filter(pk=str(action_id)))
    try:
        with transaction.atomic():
            action = _pending(action_id)
            _decide_as_person(action)  # the same rechecks as a commit; the person approves
            action.result, landed = _apply_watched(action, approved_by=reviewer)
            outcome = _decided(action, ActionState.COMMITTED, APPROVED, reviewer, note)
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
            _decide_as_person(action)
            _, landed = _apply_watched(action, approved_by="dry run")
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
        return _decided(_pending(action_id), ActionState.REJECTED, REJECTED, reviewer, note)


def _decided(
    action: PreparedAction, state: str, kind: str, reviewer: str, note: str
) -> dict[str, Any]:
    """Store and audit a person's decision; the outcome the agent reads."""
    action.state, action.decided_by, action.decision_note = state, reviewer, note
    action.decided_at = timezone.now()
    decided = ["state", "decided_by", "decision_note", "decided_at"]
    action.save(update_fields=[*decided, "result", "collection_ids"])
    audit_decision(action, kind=kind, reviewer=reviewer, note=note)
    return _outcome(action, replayed=False)


# Stale writes a person has not yet seen are listed until someone dismisses them. A write that can
# no longer apply is final, but it is not nothing: a person may have expected it (the agent said
# it would update Kirat) and should hear that it did not happen. It stays listed on the dashboard
# and on its records' pages, with the reason, until a person dismisses it.


def needing_attention(workspaces: frozenset[str] | None) -> QuerySet[PreparedAction]:
    """Stale writes nobody dismissed, in these workspaces (None: every workspace)."""
    stale = PreparedAction.objects.filter(state=ActionState.STALE, dismissed_at__isnull=True)
    return stale if workspaces is None else stale.filter(workspace_id__in=workspaces)


def dismiss_stale_action(*, action_id: str, reviewer: str) -> None:
    """Set a stale write aside. Claimed only while it is still stale and not dismissed, so two
    people dismissing at once both succeed and the first name stands."""
    claimed = PreparedAction.objects.filter(
        pk=action_id, state=ActionState.STALE, dismissed_at__isnull=True
    ).update(dismissed_by=reviewer, dismissed_at=timezone.now())
    if claimed:
        return
    action = PreparedAction.objects.filter(pk=action_id).only("state", "dismissed_by").first()
    if action is None:
        raise not_found("action", action_id)
    if action.state != ActionState.STALE:
        raise invalid(
            "action_id", f"only a stale write can be dismissed; this one is {action.state}."
        )


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
    return _mark_those(waiting, "")


def _still_applies(action: PreparedAction) -> AnchorError | None:
    """Try a waiting write as an approval would, and roll back: the final refusal, if any."""
    try:
        with transaction.atomic():
            _decide_as_person(action)
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
    return _mark_those(PreparedAction.objects.filter(pk__in=found[-(limit or len(found)) :]), cause)


def _mark_those(waiting: QuerySet[PreparedAction], cause: str) -> list[str]:
    """Mark stale, oldest first, those of the waiting writes that can no longer apply; the
    reason names `cause` (the write that made them so) when known."""
    stale = []
    for action in waiting.order_by("created_at"):
        error = _still_applies(action)
        if error is not None:
            _mark_stale(action.pk, error, reason=_caused(cause, action, error) if cause else "")
            stale.append(action.pk)
    return stale
