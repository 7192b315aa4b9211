"""traverse: a breadth-first walk over explicit links, one query per level whatever its width.

Each reached record comes once, with its depth and first shortest path. Bounded on any graph:
max_nodes records, 2000 relationships scanned per level and direction, 500 edges reported."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from records import validation as v
from records.models import Record
from records.selectors import arguments as args
from records.selectors.scoped import collection_checked, in_workspace
from records.selectors.serialize import iso
from records.selectors.sql import Sql, fetch_all, joined, link_sides, of_types, placeholders, vendor

MAX_DEPTH = 4
MAX_NODES = 200
MAX_EDGES = 500
SCAN_PER_DIRECTION = 2000


def traverse(
    *,
    workspace_id: str,
    start_record_id: Any,
    max_depth: Any = 2,
    direction: Any = "both",
    relationship_types: Any = None,
    collection_id: Any = None,
    max_nodes: Any = 50,
) -> dict[str, Any]:
    start_id = v.record_id(start_record_id, "start_record_id")
    max_depth = args.bounded_int(max_depth, "max_depth", low=1, high=MAX_DEPTH)
    max_nodes = args.bounded_int(max_nodes, "max_nodes", low=1, high=MAX_NODES)
    direction = args.direction(direction, "direction", default="both")
    types = args.relationship_types(relationship_types, "relationship_types")
    collection_id = collection_checked(workspace_id, collection_id)
    start = in_workspace(
        Record.objects.values_list("id", "title", "collection_id", "archived_at"),
        workspace_id=workspace_id,
        pk=start_id,
        kind="record",
        field="start_record_id",
    )

    walk = _Walk(max_nodes)
    walk.visit(start, 0, [])
    frontier = [start_id]
    for depth in range(1, max_depth + 1):
        if not frontier:
            break
        rows = fetch_all(_level_sql(workspace_id, frontier, direction, types))
        # UNION ALL promises no order: outgoing first, then each direction oldest link first.
        rows.sort(key=lambda row: (row[0] != "outgoing", str(row[1]), row[2]))
        frontier = walk.step([row[:1] + row[2:] for row in rows], depth)

    reached = [node for node in walk.nodes.values() if node["depth"] > 0]
    returned = [n for n in reached if collection_id is None or n["collection_id"] == collection_id]
    return {
        "start": walk.nodes[start_id],
        "records": returned,
        "reached_count": len(reached),
        "returned_count": len(returned),
        "edges": list(walk.edges.values()),
        "truncated": any(walk.truncation.values()),
        "truncation": walk.truncation,
    }


class _Walk:
    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: dict[str, dict[str, Any]] = {}
        self.truncation = {"max_nodes": False, "relationship_scan": False, "edges": False}

    def visit(self, node: tuple[str, str, str, Any], depth: int, path: list[Any]) -> None:
        record_id, title, collection_id, archived_at = node
        self.nodes[record_id] = {
            "record_id": record_id,
            "title": title,
            "collection_id": collection_id,
            "archived_at": iso(_as_datetime(archived_at)),
            "depth": depth,
            "path": path,
        }

    def step(self, rows: list[tuple[Any, ...]], depth: int) -> list[str]:
        """Take one level's scanned links; return the next frontier in discovery order."""
        scanned = {"outgoing": 0, "incoming": 0}
        next_frontier: list[str] = []
        for walked, rel_id, from_id, to_id, rel_type, title, collection_id, archived_at in rows:
            scanned[walked] += 1
            if scanned[walked] > SCAN_PER_DIRECTION:  # the extra row only proves there is more
                self.truncation["relationship_scan"] = True
                continue
            if to_id not in self.nodes:
                if len(self.nodes) - 1 >= self.max_nodes:
                    self.truncation["max_nodes"] = True
                    continue
                step = {
                    "relationship_type": rel_type,
                    "direction": walked,
                    "record_id": to_id,
                    "title": title,
                }
                path = [*self.nodes[from_id]["path"], step]
                self.visit((to_id, title, collection_id, archived_at), depth, path)
                next_frontier.append(to_id)
            if rel_id in self.edges:
                continue
            if len(self.edges) >= MAX_EDGES:
                self.truncation["edges"] = True
                continue
            source, target = (from_id, to_id) if walked == "outgoing" else (to_id, from_id)
            self.edges[rel_id] = {
                "relationship_id": rel_id,
                "source_id": source,
                "relationship_type": rel_type,
                "target_id": target,
            }
        return next_frontier


def _level_sql(
    workspace_id: str, frontier: list[str], direction: str, types: list[str] | None
) -> Sql:
    """Both directions in one statement, each capped separately (one row over the cap)."""
    # A frontier is at most MAX_NODES records, so the per-record source/target indexes always
    # win; without statistics SQLite prefers the workspace index for a long IN list and scans
    # every link in the workspace. Its unary + keeps that index out of the plan.
    workspace = "+rel.workspace_id" if vendor() == "sqlite" else "rel.workspace_id"
    of_type = of_types(types)
    ids = placeholders(frontier)
    parts = [
        Sql(
            f"SELECT * FROM (SELECT '{walked}' AS walked, rel.created_at, rel.id, "
            f"rel.{own}, rel.{other}, "
            "rel.relationship_type, o.title, o.collection_id, o.archived_at "
            f"FROM records_relationship rel JOIN records_record o ON o.id = rel.{other} "
            f"WHERE {workspace} = %s AND rel.{own} IN ({ids.text}){of_type.text} "
            "ORDER BY rel.created_at, rel.id LIMIT %s) AS " + walked,
            (workspace_id, *ids.params, *of_type.params, SCAN_PER_DIRECTION + 1),
        )
        for walked, own, other in link_sides(direction)
    ]
    return joined(parts, " UNION ALL ")


def _as_datetime(value: Any) -> datetime | None:
    """Raw SQL on SQLite returns timestamps as text or naive datetimes; both are UTC."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else parse_datetime(value)
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed
