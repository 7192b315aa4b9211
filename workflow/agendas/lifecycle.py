"""Presenting and acknowledging the whole picture; pause, resume, abandon, finish; closure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from records.errors import AnchorError, invalid
from workflow.agendas import inputs
from workflow.agendas.errors import SYNTHESIS_REQUIRED, order_error
from workflow.agendas.guard import Frame, mutate
from workflow.agendas.picture import REPLY_BYTES, json_size, short, whole_picture
from workflow.agendas.presentation import Position, load_position, new_presentation_id, state_view
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer
from workflow.scope import Scope

KEEP_HINT = (
    "Unresolved items are listed here only. If one needs long-term memory (a TODO, a decision "
    "to revisit), keep it as a record with resolve_record + prepare_write/commit_write."
)


UNRESOLVED_BYTES = 5_000  # closure's list of unresolved items; the picture shows them all
PREVIEW = 120
# Room for the picture's own keys (folded lists, the unfold hint) and the envelope.
PICTURE_KEYS_BYTES = 1_000


def presented(agenda: Agenda, *, unfold: str | None = None, reserve: int = 0) -> dict[str, Any]:
    """The state plus the whole picture; when a presentation is pending, its ID.

    reserve is what the caller will add to the reply; the picture fits in what is left."""
    position = load_position(agenda)
    result = {**state_view(position), "presentation_id": agenda.pending_presentation_id or None}
    budget = REPLY_BYTES - json_size(result) - reserve - PICTURE_KEYS_BYTES
    result["whole_picture"] = whole_picture(agenda, unfold=unfold, budget=budget)
    return result


def _close_layers(frame: Frame) -> None:
    for layer in frame.position.stack:
        layer.status = AgendaLayer.CLOSED
        layer.closed_at = frame.now
        layer.save(update_fields=["status", "closed_at"])


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
        entry: dict[str, Any] = {
            "number": item.path,
            "text": short(item.text, PREVIEW),
            "state": item.state,
            "list": item.layer.kind,
        }
        if item.reason:
            entry["reason"] = short(item.reason, PREVIEW)
        if item.record_id:
            entry["record_id"] = item.record_id
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


def _closed(position: Position) -> dict[str, Any]:
    return {**state_view(position), "closure": closure_summary(position.agenda)}


def acknowledge(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, presentation_id: Any
) -> dict[str, Any]:
    def apply(frame: Frame) -> dict[str, Any]:
        pending = frame.agenda.pending_presentation_id
        if not pending:
            raise order_error(
                "No presentation is waiting for acknowledgement; carry on with next_step.",
                current=state_view(frame.position),
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


Control = tuple[str, tuple[str, ...], Callable[[Frame], dict[str, Any]], Callable[..., Any]]
ACTIVE, OPEN = (Agenda.ACTIVE,), (Agenda.ACTIVE, Agenda.PAUSED)


def control(
    scope: Scope, *, agenda_id: Any, cursor_token: Any, action: Any, text: Any = None
) -> dict[str, Any]:
    handlers = {
        "present": _present,
        "pause": _pause,
        "resume": _resume,
        "abandon": _abandon,
        "finish": _finish,
    }
    if action not in handlers:
        raise invalid("action", f"{action!r} is not one of {sorted(handlers)}.")
    if action in ("present", "resume") and text is not None:
        raise invalid("text", f"{action} takes no text; omit it.")
    kind, statuses, apply, reply = handlers[action](text)
    position = mutate(
        scope,
        agenda_id=agenda_id,
        cursor_token=cursor_token,
        kind=kind,
        apply=apply,
        statuses=statuses,
        needs_presentation=action == "finish",
    )
    result: dict[str, Any] = reply(position)
    return result


def _issue_presentation(frame: Frame) -> dict[str, Any]:
    frame.agenda.pending_presentation_id = new_presentation_id()
    return {"presentation_id": frame.agenda.pending_presentation_id}


def _presented(position: Position) -> dict[str, Any]:
    return presented(position.agenda)


def _present(text: Any) -> Control:
    return "presented", ACTIVE, _issue_presentation, _presented


def _pause(text: Any) -> Control:
    note = inputs.statement(text, "text", "A pause note") if text is not None else ""

    def apply(frame: Frame) -> dict[str, Any]:
        frame.agenda.status = Agenda.PAUSED
        mark_sync_pending(frame.agenda)
        frame.agenda.pending_presentation_id = ""  # resume presents again
        return {"note": note}

    return "paused", ACTIVE, apply, state_view


def _resume(text: Any) -> Control:
    def apply(frame: Frame) -> dict[str, Any]:
        frame.agenda.status = Agenda.ACTIVE
        return _issue_presentation(frame)

    return "resumed", (Agenda.PAUSED,), apply, _presented


def _abandon(text: Any) -> Control:
    reason = inputs.statement(text, "text", "The reason for abandoning")

    def apply(frame: Frame) -> dict[str, Any]:
        _close_layers(frame)
        frame.agenda.status = Agenda.ABANDONED
        mark_sync_pending(frame.agenda)
        frame.agenda.pending_presentation_id = ""
        frame.agenda.closing_note = reason
        frame.agenda.closed_at = frame.now
        return {"reason": reason}

    return "abandoned", OPEN, apply, _closed


def _finish(text: Any) -> Control:
    summary = inputs.statement(text, "text", "A closing summary")

    def apply(frame: Frame) -> dict[str, Any]:
        position = frame.position
        layer, focus = position.deepest, position.focus
        assert layer is not None
        if layer.kind != AgendaLayer.ROOT:
            raise order_error(
                f"The {layer.kind} list {layer.label.rstrip('.')} is still open; resolve its "
                "items and call agenda_return before finishing the agenda.",
                current=state_view(position),
            )
        if focus is not None and focus.awaiting_synthesis:
            raise AnchorError(
                SYNTHESIS_REQUIRED,
                f"Item {focus.path} awaits the synthesis of its child list: agenda_step "
                "action=revise first.",
                current=state_view(position),
            )
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
                current=state_view(position),
            )
        layer.outcome = summary
        _close_layers(frame)
        layer.save(update_fields=["outcome"])
        frame.agenda.status = Agenda.FINISHED
        mark_sync_pending(frame.agenda)
        frame.agenda.closing_note = summary
        frame.agenda.closed_at = frame.now
        return {"summary": summary}

    return "finished", ACTIVE, apply, _closed
