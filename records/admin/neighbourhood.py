"""A small picture of a record and its linked records, drawn as inline SVG: incoming links on the
left, outgoing on the right, at most SIDE_LIMIT a side (two bounded queries for a hub record)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from records.models import Record, Relationship

SIDE_LIMIT = 8
NODE_W, NODE_H, ROW = 220, 46, 60
LEFT_X, CENTER_X, RIGHT_X = 10, 370, 730
WIDTH = RIGHT_X + NODE_W + 10
TITLE_CHARS = 30
# A link's type is written at its neighbour's end, in the 140 px between the columns; a longer
# one ran over the converging lines and the centre box, so it is cut (whole on hover).
LABEL_CHARS = 22


@dataclass
class Node:
    x: int
    y: int
    title: str
    full_title: str
    collection: str
    url: str
    archived: bool
    center: bool = False

    @property
    def text_x(self) -> int:
        return self.x + 10


@dataclass
class Edge:
    x1: int
    y1: int
    x2: int
    y2: int
    full_label: str
    label_x: int
    label_y: int
    anchor: str

    @property
    def label(self) -> str:
        return _short(self.full_label, LABEL_CHARS)


def _short(title: str, limit: int = TITLE_CHARS) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _node(record: Record, x: int, y: int, *, center: bool = False) -> Node:
    return Node(
        x=x,
        y=y,
        title=_short(record.title),
        full_title=record.title,
        collection=record.collection.name,
        url=reverse("admin:records_record_change", args=[record.pk]),
        archived=record.archived_at is not None,
        center=center,
    )


def _side(record: Record, direction: str) -> tuple[list[Relationship], int]:
    own, other = ("source", "target") if direction == "out" else ("target", "source")
    links = Relationship.objects.filter(**{own: record}).select_related(f"{other}__collection")
    shown = list(links.order_by("relationship_type", "created_at", "id")[: SIDE_LIMIT + 1])
    hidden = 0
    if len(shown) > SIDE_LIMIT:
        hidden = links.count() - SIDE_LIMIT
        shown = shown[:SIDE_LIMIT]
    return shown, hidden


def record_neighbourhood(record: Record) -> dict[str, Any]:
    outgoing, more_out = _side(record, "out")
    incoming, more_in = _side(record, "in")
    rows = max(len(outgoing), len(incoming), 1)
    height = rows * ROW + 20
    center_y = (height - NODE_H) // 2
    center = _node(record, CENTER_X, center_y, center=True)
    nodes, edges = [center], []
    middle = center_y + NODE_H // 2
    for index, rel in enumerate(incoming):
        y = 10 + index * ROW + (rows - len(incoming)) * ROW // 2
        nodes.append(_node(rel.source, LEFT_X, y))
        x, y = LEFT_X + NODE_W, y + NODE_H // 2
        edges.append(Edge(x, y, CENTER_X - 4, middle, rel.relationship_type, x + 8, y - 6, "start"))
    for index, rel in enumerate(outgoing):
        y = 10 + index * ROW + (rows - len(outgoing)) * ROW // 2
        nodes.append(_node(rel.target, RIGHT_X, y))
        x, y = RIGHT_X - 4, y + NODE_H // 2
        edges.append(
            Edge(CENTER_X + NODE_W, middle, x, y, rel.relationship_type, x - 8, y - 6, "end")
        )
    relationships_url = reverse("admin:records_relationship_changelist")
    return {
        "width": WIDTH,
        "height": height,
        "node_w": NODE_W,
        "node_h": NODE_H,
        "nodes": nodes,
        "edges": edges,
        "more_in": more_in,
        "more_out": more_out,
        "incoming_url": f"{relationships_url}?target__id__exact={record.pk}",
        "outgoing_url": f"{relationships_url}?source__id__exact={record.pk}",
        "empty": not outgoing and not incoming,
    }
