"""The frame of every agenda mutation: lock, check the cursor token and the gates, apply, seal.

One transaction, every check before the first write; a success bumps the revision, replaces the
nonce and appends one sealed event. An agenda failing its health check moves no further until a
person has agenda_repair re-seal it, which it does only while the agenda is exactly as inspected
(its hashes), broken, and with sound lists and items.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from records.errors import AnchorError, invalid
from records.selectors import in_workspace
from workflow.agendas import inputs
from workflow.agendas.health import (
    REPAIRED,
    REPAIRED_LOG_KEY,
    check_health,
    event_hash,
    state_hash,
)
from workflow.agendas.presentation import (
    Position,
    load_position,
    new_presentation_id,
    presented,
    state_view,
    token_revision,
    tokens_match,
)
from workflow.models.agendas import Agenda, AgendaEvent, AgendaItem
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
    if check_health(agenda, from_head=True)["healthy"]:
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
    """Bump the revision, replace the nonce, and append the event sealing the agenda's state
    (its lists and items already saved) as event number agenda.revision."""
    agenda.revision += 1
    agenda.cursor_nonce = secrets.token_hex(16)
    agenda.updated_at = at
    previous = (
        AgendaEvent.objects.filter(agenda=agenda).order_by("-sequence").only("event_hash").first()
    )
    event = AgendaEvent(
        agenda=agenda,
        sequence=agenda.revision,
        kind=kind,
        actor_id=scope.actor_id,
        payload=payload,
        state_hash=state_hash(agenda),
        previous_hash=previous.event_hash if previous else "",
        created_at=at,
    )
    event.event_hash = event_hash(event)
    event.save()
    # It follows the events checked before this command, so it is the next check's head.
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


HASH = re.compile(r"^[0-9a-f]{64}$")


def _hash(value: str, field: str) -> str:
    if not HASH.match(value):
        raise invalid(field, "pass the 64-character hash from agenda_view view=health.")
    return value


def repair(
    scope: Scope,
    *,
    agenda_id: Any,
    expected_state_hash: Any,
    expected_event_log_hash: Any,
    reason: Any,
) -> dict[str, Any]:
    state = _hash(expected_state_hash, "expected_state_hash")
    log = _hash(expected_event_log_hash, "expected_event_log_hash")
    why = inputs.statement(reason, "reason", "The reason for the repair")
    with transaction.atomic():
        agenda = load_agenda(scope, agenda_id, lock=True)
        report = check_health(agenda)
        if report["healthy"]:
            raise order_error(
                "The agenda is healthy; there is nothing to repair and nothing was changed.",
                health=report,
            )
        if (state, log) != (report["state_hash"], report["event_log_hash"]):
            raise AnchorError(
                STALE_HASHES,
                "expected_state_hash or expected_event_log_hash is not the agenda's current "
                "one: it changed since it was inspected. Nothing was changed. Read agenda_view "
                "view=health again, check the agenda with the user, then retry.",
                health=report,
            )
        if not report["repairable"]:
            raise AnchorError(
                AGENDA_UNHEALTHY,
                "The agenda's lists or items are not sound (see problems); a repair only "
                "re-seals the event chain, so nothing was changed. Have a person restore the "
                "rows first.",
                problems=report["problems"],
            )
        last = AgendaEvent.objects.filter(agenda=agenda).order_by("-sequence").first()
        # The next sequence must follow both the stored revision and the last stored event.
        agenda.revision = max(agenda.revision, last.sequence if last else 0)
        if agenda.status == Agenda.ACTIVE:
            agenda.pending_presentation_id = new_presentation_id()  # show the repaired picture
        payload = {
            "reason": why,
            "problems": report["problems"],
            "repaired_state_hash": state,
            REPAIRED_LOG_KEY: log,
            "presentation_id": agenda.pending_presentation_id,
        }
        seal(agenda, scope=scope, kind=REPAIRED, payload=payload, at=timezone.now())
        return {**presented(agenda), "repaired": {"problems": report["problems"], "reason": why}}
