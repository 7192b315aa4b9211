"""Where an agenda stands (its stack of active layers, the item in focus, the cursor token) and
what the agent is shown: the compact state and the next step (the whole picture is picture.py).

A cursor token is a digest of one exact position (agenda, revision, layer, item) and a random
nonce stored with the revision: no server secret, valid across restarts until the next mutation
replaces the nonce, and not guessable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer

TOKEN_DIGEST_CHARS = 24


def new_nonce() -> str:
    return secrets.token_hex(16)


def new_presentation_id() -> str:
    return f"pres-{secrets.token_hex(6)}"


def cursor_token(
    *, agenda_id: str, revision: int, layer_id: str, item_id: str | None, nonce: str
) -> str:
    material = "\x1f".join([agenda_id, str(revision), layer_id, item_id or "-", nonce])
    digest = hashlib.sha256(material.encode()).hexdigest()[:TOKEN_DIGEST_CHARS]
    return f"r{revision}.{digest}"


def token_revision(token: str) -> int | None:
    """The revision a well-formed token claims, to explain a refusal; never trusted."""
    head, _, _ = token.partition(".")
    if head.startswith("r") and head[1:].isdigit():
        return int(head[1:])
    return None


def tokens_match(given: str, current: str) -> bool:
    return hmac.compare_digest(given.encode(), current.encode())


@dataclass
class Position:
    agenda: Agenda
    stack: list[AgendaLayer]  # active layers, root first; empty once the agenda is closed

    @property
    def deepest(self) -> AgendaLayer | None:
        return self.stack[-1] if self.stack else None

    @property
    def focus(self) -> AgendaItem | None:
        layer = self.deepest
        return layer.focus_item if layer is not None else None

    @property
    def token(self) -> str:
        layer = self.deepest
        return cursor_token(
            agenda_id=self.agenda.pk,
            revision=self.agenda.revision,
            layer_id=layer.pk if layer else "-",
            item_id=layer.focus_item_id if layer else None,
            nonce=self.agenda.cursor_nonce,
        )


def load_position(agenda: Agenda) -> Position:
    stack = list(
        AgendaLayer.objects.filter(agenda=agenda, status=AgendaLayer.ACTIVE)
        .select_related("focus_item", "parent_item")
        .order_by("depth", "sequence")
    )
    for layer in stack:
        if layer.focus_item is not None:
            layer.focus_item.layer = layer  # paths need the label without another query
    return Position(agenda=agenda, stack=stack)


def _given(view: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """The view, with each optional part only when it is set."""
    return view | {key: value for key, value in optional.items() if value}


def item_view(item: AgendaItem) -> dict[str, Any]:
    return _given(
        {"number": item.path, "text": item.text, "state": item.state},
        {
            "conclusion": item.conclusion,
            "reason": item.reason,
            "awaiting_synthesis": item.awaiting_synthesis,
            "record_id": item.record_id,
            "earlier": item.earlier,
        },
    )


def _layer_head(layer: AgendaLayer) -> dict[str, Any]:
    return _given(
        {"kind": layer.kind, "label": layer.label.rstrip(".") or "root", "status": layer.status},
        {
            "source_reference": layer.source_reference,
            "unverified_source_reason": layer.unverified_reason,
            "outcome": layer.outcome,
        },
    )


def next_step(position: Position) -> str:
    agenda = position.agenda
    if agenda.status == Agenda.PAUSED:
        return "Paused. Call agenda_control action=resume to continue, or action=abandon."
    if agenda.is_closed:
        if agenda.sync_state == Agenda.SYNC_PENDING:
            return "Closed with outcomes for bound records: call agenda_sync_records now."
        return "Closed. Keep unresolved items as records if they need long-term memory."
    if agenda.pending_presentation_id:
        return (
            "Show whole_picture.text to the user first, then call agenda_acknowledge with "
            f"presentation_id {agenda.pending_presentation_id!r}. Progress is refused until then."
        )
    layer, focus = position.deepest, position.focus
    assert layer is not None
    if focus is not None and focus.awaiting_synthesis:
        return (
            f"A child list of item {focus.path} returned. Review its outcomes, then call "
            "agenda_step action=revise with the parent's conclusion taking them into account."
        )
    if focus is not None and focus.state == AgendaItem.CURRENT:
        return (
            f"Discuss item {focus.path} with the user, then agenda_step action=complete "
            "(with the conclusion), defer or block (with the reason)."
        )
    if layer.items.filter(state=AgendaItem.OPEN).exists():
        return "Call agenda_step action=next to move to the next open item of this list."
    if layer.kind == AgendaLayer.ROOT:
        return "Every item is resolved: call agenda_control action=finish with a closing summary."
    return f"Every item of this {layer.kind} list is resolved: call agenda_return with its outcome."


def state_view(position: Position) -> dict[str, Any]:
    """Returned by every agenda tool: enough to take the next step, with the current token."""
    agenda, layer, focus = position.agenda, position.deepest, position.focus
    return {
        "agenda_id": agenda.pk,
        "title": agenda.title,
        "status": agenda.status,
        "revision": agenda.revision,
        "cursor_token": position.token,
        "layer": _layer_head(layer) if layer else None,
        "current_item": item_view(focus) if focus else None,
        "pending_presentation_id": agenda.pending_presentation_id or None,
        "sync_state": agenda.sync_state,
        "next_step": next_step(position),
    }
