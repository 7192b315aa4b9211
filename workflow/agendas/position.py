"""Where an agenda stands: its stack of active layers, the deepest one, the item in focus."""

from __future__ import annotations

from dataclasses import dataclass

from workflow.agendas.tokens import cursor_token
from workflow.models.agendas import Agenda, AgendaItem, AgendaLayer


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


def next_open(layer: AgendaLayer) -> AgendaItem | None:
    item = layer.items.filter(state=AgendaItem.OPEN).order_by("number").first()
    if item is not None:
        item.layer = layer
    return item
