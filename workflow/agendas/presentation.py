"""Where an agenda stands (its stack of active layers, the item in focus, the cursor token) and
what the agent is shown: the compact state with the next step, and the whole picture.

A cursor token is a digest of one exact position (agenda, revision, layer, item) and a random
nonce stored with the revision: no server secret, valid across restarts until the next mutation
replaces the nonce, and not guessable.

The whole picture is every list and item as text for the user, kept small enough to send: closed
child lists and interruptions fold to one line with their outcome, and previews shrink until the
text fits its budget; the current item is always given in full beside it (state_view).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from records.errors import invalid
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer

TOKEN_DIGEST_CHARS = 24
# A whole reply's JSON text stays under this (16 KB, less room for the envelope); the
# picture gets what the rest of the reply leaves, and lists of lines get what is left after it.
REPLY_BYTES = 15_000
# Widest first: previews of item text and of its conclusion or reason; 0 drops the note.
WIDTHS = ((160, 160), (100, 80), (60, 48), (40, 32), (32, 0))
# Room for the picture's own keys (folded lists, the unfold hint) and the envelope.
PICTURE_KEYS_BYTES = 1_000


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


def with_optional(view: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """The view, with each optional part only when it is set."""
    return view | {key: value for key, value in optional.items() if value}


def item_view(item: AgendaItem) -> dict[str, Any]:
    return with_optional(
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
    return with_optional(
        {"kind": layer.kind, "label": layer_name(layer), "status": layer.status},
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


def short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def layer_name(layer: AgendaLayer) -> str:
    return layer.label.rstrip(".") or "root"


def counts_text(items: Iterable[AgendaItem]) -> str:
    counts = Counter(item.state for item in items)
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def item_line(item: AgendaItem, widths: tuple[int, int], marker: str = "  ", tail: str = "") -> str:
    text_width, note_width = widths
    note = ""
    if note_width and item.conclusion:
        note = f" — {short(item.conclusion, note_width)}"
    elif note_width and item.reason:
        note = f" — reason: {short(item.reason, note_width)}"
    if note_width and item.earlier:
        earlier = item.earlier
        note += f" (earlier {earlier['state']}: {short(earlier['reason'], note_width)})"
    return f"{marker}{item.path}. [{item.state}] {short(item.text, text_width)}{note}{tail}"


def json_size(value: Any) -> int:
    """Bytes of value in the reply's JSON text (escapes included, as clients receive it)."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def fitted(render: Any, budget: int) -> tuple[list[str], int]:
    """The lines render(widths) gives at the widest previews that fit the budget in bytes."""
    for widths in WIDTHS:
        lines: list[str] = render(widths)
        if json_size(lines) <= budget:
            break
    return lines, widths[0]


def presented(agenda: Agenda, *, unfold: str | None = None, reserve: int = 0) -> dict[str, Any]:
    """The state plus the whole picture (and a pending presentation's ID); the picture fits in
    what the reply leaves after `reserve`, what the caller will add to it."""
    position = load_position(agenda)
    result = {**state_view(position), "presentation_id": agenda.pending_presentation_id or None}
    budget = REPLY_BYTES - json_size(result) - reserve - PICTURE_KEYS_BYTES
    result["whole_picture"] = whole_picture(agenda, unfold=unfold, budget=budget)
    return result


def whole_picture(
    agenda: Agenda,
    *,
    unfold: str | None = None,
    unfold_all: bool = False,
    budget: int = REPLY_BYTES,
) -> dict[str, Any]:
    """Every layer and item, nested under the item each layer was opened from; `unfold` names
    one list ("3", "3.1", "i1") to show in full, with the lists it sits in."""
    layers = list(AgendaLayer.objects.filter(agenda=agenda).order_by("sequence"))
    names = [layer_name(layer) for layer in layers if layer.kind != AgendaLayer.ROOT]
    if unfold is not None and unfold not in names:
        raise invalid(
            "unfold_layer",
            f"{unfold!r} is not a child list or interruption of this agenda; its lists are "
            f"{names or 'none'} (the number of the item a child list was opened from, or i1, "
            "i2 for interruptions).",
        )
    by_id = {layer.pk: layer for layer in layers}
    items: dict[str, list[AgendaItem]] = defaultdict(list)
    for item in AgendaItem.objects.filter(layer__agenda=agenda).order_by("number"):
        item.layer = by_id[item.layer_id]
        items[item.layer_id].append(item)
    opened_from: dict[str | None, list[AgendaLayer]] = defaultdict(list)
    unfolded: set[str] = set()
    for layer in layers:
        opened_from[layer.parent_item_id].append(layer)
        if unfold_all or layer_name(layer) == unfold:
            current: AgendaLayer | None = layer
            while current is not None:
                unfolded.add(current.pk)
                current = by_id.get(current.parent_layer_id or "")
    position = load_position(agenda)
    focus_ids = {layer.focus_item_id for layer in position.stack}
    here = position.focus.pk if position.focus else None
    folded: list[str] = []

    def render(widths: tuple[int, int]) -> list[str]:
        folded.clear()
        lines = [f"Agenda: {agenda.title} ({agenda.status}, revision {agenda.revision})"]

        def layer_lines(layer: AgendaLayer, indent: int) -> None:
            pad = "  " * indent
            rows = items[layer.pk]
            title = "Child list" if layer.kind == AgendaLayer.CHILD else "Interruption"
            closed = layer.kind != AgendaLayer.ROOT and layer.status == AgendaLayer.CLOSED
            if closed and layer.pk not in unfolded:
                folded.append(layer_name(layer))
                outcome = short(layer.outcome, widths[0]) if layer.outcome else "no outcome"
                lines.append(
                    f"{pad}{title} {layer_name(layer)} [closed: {counts_text(rows)}] — "
                    f"Outcome: {outcome}"
                )
                return
            if layer.kind != AgendaLayer.ROOT:
                lines.append(f"{pad}{title} {layer_name(layer)} [{layer.status}]")
            source = layer.source_reference or f"unverified: {layer.unverified_reason}"
            lines.append(f"{pad}Source: {short(source, widths[0])}")
            if layer.outcome:
                lines.append(f"{pad}Outcome: {short(layer.outcome, widths[0])}")
            for item in rows:
                marker = "▶ " if item.pk in focus_ids else "  "
                tail = "   ◀ you are here" if item.pk == here else ""
                if item.awaiting_synthesis:
                    tail += "   (awaiting synthesis)"
                lines.append(pad + item_line(item, widths, marker, tail))
                for child in opened_from.get(item.pk, []):
                    layer_lines(child, indent + 2)

        for root in (x for x in layers if x.kind == AgendaLayer.ROOT):
            layer_lines(root, 1)
        return lines

    # The admin shows everything in full: people read it on a page, not in a reply.
    lines, width = fitted(render, sys.maxsize if unfold_all else budget)
    picture: dict[str, Any] = {"text": "\n".join(lines)}
    if folded:
        picture["folded"] = list(folded)
        picture["unfold"] = "agenda_view unfold_layer=<list> shows a folded list in full."
    if width < WIDTHS[0][0]:
        picture["preview_chars"] = width
    return picture


def returned_lines(name: str, items: list[AgendaItem], budget: int) -> dict[str, Any]:
    """The outcomes of a list just returned from, for the parent's synthesis, within budget."""

    def render(widths: tuple[int, int]) -> list[str]:
        return [item_line(item, widths, marker="") for item in items]

    lines, _ = fitted(render, budget)
    summary: dict[str, Any] = {"counts": counts_text(items)}
    while lines and json_size(lines) > budget:
        lines.pop()
    summary["items"] = lines
    if len(lines) < len(items):
        summary["more"] = (
            f"{len(items) - len(lines)} more items: agenda_view unfold_layer={name} shows them all."
        )
    return summary
