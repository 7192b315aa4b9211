"""Presenting and acknowledging the whole picture; pause, resume, abandon, finish; closure."""

from __future__ import annotations

from collections import Counter
from typing import Any

from records.errors import invalid
from workflow.agendas import inputs
from workflow.agendas.guard import Frame, mutate, order_error, synthesis_error
from workflow.agendas.presentation import (
    json_size,
    new_presentation_id,
    presented,
    short,
    state_view,
    with_optional,
)
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.scope import Scope

KEEP_HINT = (
    "Unresolved items are listed here only. If one needs long-term memory (a TODO, a decision "
    "to revisit), keep it as a record with resolve_record + prepare_write/commit_write."
)
UNRESOLVED_BYTES = 5_000  # closure's list of unresolved items; the picture shows them all
PREVIEW = 120


def mark_sync_pending(agenda: Agenda) -> None:
    """Bound items resolved since the last sync need another one."""
    if agenda.sync_state == Agenda.SYNC_NOT_BOUND:
        return
    unsynced = AgendaItem.objects.filter(
        layer__agenda=agenda,
        layer__kind=AgendaLayer.ROOT,
        record__isnull=False,
        state__in=AgendaItem.RESOLVED,
        sync_status="",
    )
    if unsynced.exists():
        agenda.sync_state = Agenda.SYNC_PENDING


def closure_summary(agenda: Agenda) -> dict[str, Any]:
    unresolved_states = [AgendaItem.DEFERRED, AgendaItem.BLOCKED]
    if agenda.status == Agenda.ABANDONED:
        unresolved_states += [AgendaItem.OPEN, AgendaItem.CURRENT]
    items = (
        AgendaItem.objects.filter(layer__agenda=agenda, state__in=unresolved_states)
        .select_related("layer")
        .order_by("layer__sequence", "number")
    )
    unresolved: list[dict[str, Any]] = []
    more = 0
    for item in items:
        entry = with_optional(
            {
                "number": item.path,
                "text": short(item.text, PREVIEW),
                "state": item.state,
                "list": item.layer.kind,
            },
            {"reason": short(item.reason, PREVIEW), "record_id": item.record_id},
        )
        if more or json_size(unresolved) + json_size(entry) > UNRESOLVED_BYTES:
            more += 1
        else:
            unresolved.append(entry)
    states = AgendaItem.objects.filter(layer__agenda=agenda).values_list("state", flat=True)
    counts = {state: 0 for state, _ in AgendaItem.STATE_CHOICES} | Counter(states)
    return {
        "status": agenda.status,
        "closing_note": agenda.closing_note,
        "item_counts": counts,
        "unresolved": unresolved,
        "unresolved_not_listed": more,
        "keep_as_records": KEEP_HINT if unresolved else "",
        "sync_required": agenda.sync_state == Agenda.SYNC_PENDING,
    }


def acknowledge(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, presentation_id: Any
) -> dict[str, Any]:
    def apply(frame: Frame) -> dict[str, Any]:
        pending = frame.agenda.pending_presentation_id
        if not pending:
            raise order_error(
                "No presentation is waiting for acknowledgement; carry on with next_step."
            )
        if presentation_id != pending:
            raise invalid(
                "presentation_id",
                f"{presentation_id!r} is not the pending presentation ({pending}). Show the "
                "latest whole picture to the user, then acknowledge its presentation_id.",
                pending_presentation_id=pending,
            )
        frame.agenda.pending_presentation_id = ""
        return {"presentation_id": pending}

    position = mutate(
        scope,
        agenda_id=agenda_id,
        cursor_token=cursor_token,
        kind="acknowledged",
        apply=apply,
        needs_presentation=False,
    )
    return state_view(position)


# action: (event kind, the statuses it acts in, the status it leaves)
CONTROLS = {
    "present": ("presented", (Agenda.ACTIVE,), Agenda.ACTIVE),
    "pause": ("paused", (Agenda.ACTIVE,), Agenda.PAUSED),
    "resume": ("resumed", (Agenda.PAUSED,), Agenda.ACTIVE),
    "abandon": ("abandoned", (Agenda.ACTIVE, Agenda.PAUSED), Agenda.ABANDONED),
    "finish": ("finished", (Agenda.ACTIVE,), Agenda.FINISHED),
}
# The actions that take text: what it is, and its key in the event; a pause note is optional.
TEXTS = {
    "pause": ("A pause note", "note"),
    "abandon": ("The reason for abandoning", "reason"),
    "finish": ("A closing summary", "summary"),
}


def control(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, action: Any, text: Any = None
) -> dict[str, Any]:
    if action not in TEXTS and text is not None:
        raise invalid("text", f"{action} takes no text; omit it.")
    kind, statuses, status = CONTROLS[action]
    note = ""
    if text is not None or action in ("abandon", "finish"):
        note = inputs.statement(text, "text", TEXTS[action][0])

    def apply(frame: Frame) -> dict[str, Any]:
        agenda, layer, focus = frame.agenda, frame.position.deepest, frame.position.focus
        if action in ("present", "resume"):
            agenda.status = status
            agenda.pending_presentation_id = new_presentation_id()
            return {"presentation_id": agenda.pending_presentation_id}
        if action == "finish":
            assert layer is not None
            if layer.kind != AgendaLayer.ROOT:
                raise order_error(
                    f"The {layer.kind} list {layer.label.rstrip('.')} is still open; resolve "
                    "its items and call agenda_return before finishing the agenda."
                )
            if focus is not None and focus.awaiting_synthesis:
                raise synthesis_error(focus)
            pending = list(
                layer.items.exclude(state__in=AgendaItem.RESOLVED)
                .order_by("number")
                .values_list("number", flat=True)
            )
            if pending:
                raise order_error(
                    f"Items {', '.join(map(str, pending))} are not resolved; complete, defer or "
                    "block each before finishing (or abandon the agenda).",
                    unresolved=pending,
                )
            layer.outcome = note
        if action != "pause":
            for active in frame.position.stack:
                active.status, active.closed_at = AgendaLayer.CLOSED, frame.now
                active.save(update_fields=["status", "closed_at", "outcome"])
            agenda.closing_note, agenda.closed_at = note, frame.now
        agenda.status = status
        agenda.pending_presentation_id = ""  # resume presents again
        mark_sync_pending(agenda)
        return {TEXTS[action][1]: note}

    position = mutate(
        scope,
        agenda_id=agenda_id,
        cursor_token=cursor_token,
        kind=kind,
        apply=apply,
        statuses=statuses,
        needs_presentation=action == "finish",
    )
    if action in ("present", "resume"):
        return presented(position.agenda)
    view = state_view(position)
    return view if action == "pause" else {**view, "closure": closure_summary(position.agenda)}
