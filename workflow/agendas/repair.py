"""agenda_repair: re-seal an agenda whose event chain or seal broke, on explicit request only:
when it is still exactly what was inspected (its hashes), something is broken, and its lists
and items are sound. It appends a "repaired" event recording the problems, the reason and the
log's digest, a checkpoint for the health check.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.utils import timezone

from records.errors import AnchorError, invalid
from workflow.agendas import inputs
from workflow.agendas.guard import AGENDA_UNHEALTHY, STALE_HASHES, load_agenda, order_error, seal
from workflow.agendas.health import REPAIRED, REPAIRED_LOG_KEY, check_health
from workflow.agendas.picture import presented
from workflow.agendas.presentation import new_presentation_id
from workflow.models.agendas import Agenda, AgendaEvent
from workflow.scope import Scope

HASH = re.compile(r"^[0-9a-f]{64}$")


def _hash(value: Any, field: str) -> str:
    if not isinstance(value, str) or not HASH.match(value):
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
