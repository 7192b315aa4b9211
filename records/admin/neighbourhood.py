"""A small picture of a record and its linked records, drawn as inline SVG: incoming links on the
left, outgoing on the right, at most SIDE_LIMIT a side (two bounded queries for a hub record)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from records.admin.link_lists import record_links
from records.models import Record

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


def record_neighbourhood(record: Record) -> dict[str, Any]:
    out_list, in_list = record_links(record, SIDE_LIMIT)
    outgoing, incoming = out_list.links, in_list.links
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
    return {
        "width": WIDTH,
        "height": height,
        "node_w": NODE_W,
        "node_h": NODE_H,
        "nodes": nodes,
        "edges": edges,
        "more_in": in_list.hidden,
        "more_out": out_list.hidden,
        "incoming_url": in_list.more_url,
        "outgoing_url": out_list.more_url,
        "empty": not outgoing and not incoming,
    }
