"""The frame of every agenda mutation: lock, check the cursor token and the gates, apply, seal.

One transaction, every check before the first write; a success bumps the revision, replaces the
nonce and appends one sealed event. An agenda failing its health check moves no further until a
person repairs it explicitly (repair.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from records.errors import AnchorError
from records.selectors import in_workspace
from workflow.agendas import inputs
from workflow.agendas.chain import append_event
from workflow.agendas.health import check_health, check_since_verified
from workflow.agendas.presentation import (
    Position,
    load_position,
    new_nonce,
    state_view,
    token_revision,
    tokens_match,
)
from workflow.models.agendas import Agenda, AgendaItem
from workflow.scope import Scope

# The agenda tools' refusal codes, beside the store's shared vocabulary in records.errors.
# The cursor token is not the agenda's current one: a delayed, repeated or foreign command.
STALE_CURSOR = "STALE_CURSOR"
# A whole picture was issued and not yet acknowledged; progress waits for it.
PRESENTATION_REQUIRED = "PRESENTATION_REQUIRED"
# A child layer returned; the parent item's conclusion must be revised before moving on.
SYNTHESIS_REQUIRED = "SYNTHESIS_REQUIRED"
# The step does not fit the agenda's state (advancing an unresolved item, acting while paused).
AGENDA_ORDER = "AGENDA_ORDER"
# A record is bound to an item of another agenda that is open, or whose outcome is not synced.
RECORD_HELD = "RECORD_HELD"
# The event chain or seal is broken: nothing moves until the agenda is explicitly repaired.
AGENDA_UNHEALTHY = "AGENDA_UNHEALTHY"
# A repair's expected hashes are not the agenda's current ones: it changed since inspection.
STALE_HASHES = "STALE_HASHES"
# Refusals of a command the agenda's state does not allow: each says where the agenda stands.
PLACED = (STALE_CURSOR, PRESENTATION_REQUIRED, SYNTHESIS_REQUIRED, AGENDA_ORDER)


def order_error(message: str, **details: Any) -> AnchorError:
    return AnchorError(AGENDA_ORDER, message, **details)


def synthesis_error(item: AgendaItem) -> AnchorError:
    return AnchorError(
        SYNTHESIS_REQUIRED,
        f"Item {item.path} awaits the synthesis of its child list. Review the child outcomes "
        "(whole picture), then agenda_step action=revise with a conclusion that takes them "
        "into account; only then can it move on.",
        item=item.path,
    )


@dataclass
class Frame:
    scope: Scope
    agenda: Agenda
    position: Position
    now: datetime


def load_agenda(scope: Scope, agenda_id: Any, *, lock: bool = False) -> Agenda:
    agenda_id = inputs.agenda_id(agenda_id)
    rows = Agenda.objects.select_for_update() if lock else Agenda.objects.all()
    return in_workspace(rows, workspace_id=scope.workspace_id, pk=agenda_id, kind="agenda")


def check_healthy(agenda: Agenda) -> None:
    if not check_since_verified(agenda):
        return
    report = check_health(agenda)  # the full check decides, and reports what a repair needs
    if report["healthy"]:
        return
    if report["repairable"]:
        fix = (
            "Show these problems to the user. If the agenda as it stands now is right, repair "
            "it with agenda_repair, passing expected_state_hash and expected_event_log_hash "
            "from this error (or agenda_view view=health) and the reason; it is never repaired "
            "automatically."
        )
    else:
        fix = (
            "Its lists or items were changed outside the tools, which no repair can vouch for: "
            "show the problems to the user and have a person restore the rows (the admin shows "
            "the event history), then repair the chain with agenda_repair."
        )
    raise AnchorError(
        AGENDA_UNHEALTHY,
        f"Agenda {agenda.pk} failed its health check, so nothing was changed. {fix}",
        problems=report["problems"],
        repairable=report["repairable"],
        expected_state_hash=report["state_hash"],
        expected_event_log_hash=report["event_log_hash"],
    )


def seal(agenda: Agenda, *, scope: Scope, kind: str, payload: dict[str, Any], at: datetime) -> None:
    """Bump the revision, replace the nonce, append the sealed event and make it the head."""
    agenda.revision += 1
    agenda.cursor_nonce = new_nonce()
    agenda.updated_at = at
    # It follows the events checked before this command, so it is the next check's head.
    event = append_event(agenda, kind=kind, actor_id=scope.actor_id, payload=payload, at=at)
    agenda.verified_sequence, agenda.verified_hash = event.sequence, event.event_hash
    agenda.save()


def _check_gates(
    position: Position, given: str, statuses: Iterable[str], presentation: bool
) -> None:
    """The cursor token, the agenda's status, and (when asked) no presentation pending."""
    agenda = position.agenda
    if not tokens_match(given, position.token):
        claimed = token_revision(given)
        if claimed is not None and claimed < agenda.revision:
            why = (
                f"it is from revision {claimed} and the agenda is at revision "
                f"{agenda.revision}: a newer command already moved it"
            )
        else:
            why = "it belongs to another agenda, layer or item, or was never issued"
        raise AnchorError(
            STALE_CURSOR,
            f"cursor_token is not this agenda's current token ({why}). Nothing was changed. "
            "Read `current` below, check the command still makes sense for the current item, "
            "and retry with current.cursor_token only if it does.",
        )
    if agenda.status not in statuses:
        if agenda.status == Agenda.PAUSED:
            message = "The agenda is paused; call agenda_control action=resume first."
        elif agenda.is_closed:
            message = f"The agenda is {agenda.status}; it can no longer change."
        else:
            message = "The agenda is active; this command is for a paused or closed agenda."
        raise order_error(message, status=agenda.status)
    pending = agenda.pending_presentation_id
    if presentation and pending:
        raise AnchorError(
            PRESENTATION_REQUIRED,
            f"Presentation {pending} has not been acknowledged. Show the whole picture "
            "(agenda_view gives it) to the user, then call agenda_acknowledge with its "
            "presentation_id. Only pause and abandon work before that.",
            presentation_id=pending,
        )


def mutate(
    scope: Scope,
    *,
    agenda_id: Any,
    cursor_token: Any,
    kind: str,
    apply: Callable[[Frame], dict[str, Any]],
    statuses: Iterable[str] = (Agenda.ACTIVE,),
    needs_presentation: bool = True,
) -> Position:
    """Run apply inside the guarded frame; apply raises to refuse, returns the event payload."""
    given = inputs.token(cursor_token)
    with transaction.atomic():
        agenda = load_agenda(scope, agenda_id, lock=True)
        check_healthy(agenda)
        position = load_position(agenda)
        now = timezone.now()
        try:
            _check_gates(position, given, statuses, needs_presentation)
            payload = apply(Frame(scope=scope, agenda=agenda, position=position, now=now))
        except AnchorError as refusal:
            if refusal.code in PLACED:
                refusal.details["current"] = state_view(position)
            raise
        seal(agenda, scope=scope, kind=kind, payload=payload, at=now)
        return load_position(agenda)
