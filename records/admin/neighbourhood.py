"""A record's links as a person reads them: two capped lists, and a small picture of the record and
its linked records drawn from them as inline SVG (incoming on the left, outgoing on the right).

Each list shows at most LINK_LIMIT links (3,000 drawn as form rows were megabytes and more fields
than Django accepts in one POST), the picture their first SIDE_LIMIT; the rest is a count and a
filtered list's link, so a hub record costs two bounded queries."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from records.admin.common import shorten
from records.models import Record, Relationship

LINK_LIMIT = 50
ORDER = ("relationship_type", "created_at", "id")
SIDE_LIMIT = 8
NODE_W, NODE_H, ROW = 220, 46, 60
LEFT_X, CENTER_X, RIGHT_X = 10, 370, 730
WIDTH = RIGHT_X + NODE_W + 10
TITLE_CHARS = 30
# A link's type is written at its neighbour's end, in the 140 px between the columns; a longer
# one ran over the converging lines and the centre box, so it is cut (whole on hover).
LABEL_CHARS = 22


def _direction(record: Record, direction: str) -> dict[str, Any]:
    """At most LINK_LIMIT links one way, counted only when there are more."""
    own, other = ("source", "target") if direction == "out" else ("target", "source")
    rows = Relationship.objects.filter(**{own: record}).select_related(f"{other}__collection")
    url = f"{reverse('admin:records_relationship_changelist')}?{own}__id__exact={record.pk}"
    shown = list(rows.order_by(*ORDER)[: LINK_LIMIT + 1])
    total = len(shown) if len(shown) <= LINK_LIMIT else rows.count()
    links = shown[:LINK_LIMIT]
    return {"links": links, "total": total, "hidden": total - len(links), "more_url": url}


def record_links(record: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    """(outgoing, incoming)"""
    return _direction(record, "out"), _direction(record, "in")


def _node(record: Record, x: int, y: int, *, center: bool = False) -> dict[str, Any]:
    return {
        "x": x,
        "y": y,
        "text_x": x + 10,
        "title": shorten(record.title, TITLE_CHARS),
        "full_title": record.title,
        "collection": record.collection.name,
        "url": reverse("admin:records_record_change", args=[record.pk]),
        "archived": record.archived_at is not None,
        "center": center,
    }


def _edge(line: tuple[int, int, int, int], label: str, *, at_start: bool) -> dict[str, Any]:
    """A line between two boxes, its label written beside the neighbour's end of it."""
    x, y = (line[0] + 8, line[1] - 6) if at_start else (line[2] - 8, line[3] - 6)
    anchor = "start" if at_start else "end"
    return {
        "line": line,
        "label_at": (x, y),
        "anchor": anchor,
        "full_label": label,
        "label": shorten(label, LABEL_CHARS),
    }


def record_neighbourhood(
    record: Record, out_list: dict[str, Any], in_list: dict[str, Any]
) -> dict[str, Any]:
    """The picture of record_links' lists: their first SIDE_LIMIT links a side."""
    outgoing, incoming = out_list["links"][:SIDE_LIMIT], in_list["links"][:SIDE_LIMIT]
    rows = max(len(outgoing), len(incoming), 1)
    height = rows * ROW + 20
    center_y = (height - NODE_H) // 2
    nodes, edges = [_node(record, CENTER_X, center_y, center=True)], []
    middle = center_y + NODE_H // 2
    for index, rel in enumerate(incoming):
        y = 10 + index * ROW + (rows - len(incoming)) * ROW // 2
        nodes.append(_node(rel.source, LEFT_X, y))
        line = (LEFT_X + NODE_W, y + NODE_H // 2, CENTER_X - 4, middle)
        edges.append(_edge(line, rel.relationship_type, at_start=True))
    for index, rel in enumerate(outgoing):
        y = 10 + index * ROW + (rows - len(outgoing)) * ROW // 2
        nodes.append(_node(rel.target, RIGHT_X, y))
        line = (CENTER_X + NODE_W, middle, RIGHT_X - 4, y + NODE_H // 2)
        edges.append(_edge(line, rel.relationship_type, at_start=False))
    return {
        "width": WIDTH,
        "height": height,
        "node_w": NODE_W,
        "node_h": NODE_H,
        "nodes": nodes,
        "edges": edges,
        "more_in": in_list["total"] - len(incoming),
        "more_out": out_list["total"] - len(outgoing),
        "incoming_url": in_list["more_url"],
        "outgoing_url": out_list["more_url"],
        "empty": not outgoing and not incoming,
    }
