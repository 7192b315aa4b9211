"""The guarded write path as an agent walks it, over a RawServer: review, prepare, commit."""

from __future__ import annotations

import uuid
from typing import Any

from tests.reliability.harness import RawServer

CLARIFIED = "the user said these generated rows are all distinct things"


def create_collection(server: RawServer, name: str) -> str:
    purpose = f"Reliability test records of {name}"
    discovery = server.ok("discover_collections", {"name": name, "purpose": purpose})
    arguments = {
        "name": name,
        "purpose": purpose,
        "record_meaning": f"One {name} item",
        "typical_fields": ["notes"],
        "relationship_guidance": "",
    }
    prepared = server.ok(
        "prepare_write",
        {
            "operation": "create_collection",
            "arguments": arguments,
            "review_ids": [discovery["discovery_id"]],
            "decision_reason": "reliability test set-up",
            "clarification": CLARIFIED,
        },
    )
    committed = server.ok("commit_write", {"action_id": prepared["action_id"]})
    return committed["result"]["collection"]["collection_id"]


def create_record(
    server: RawServer, collection_id: str, title: str, data: dict[str, Any]
) -> dict[str, Any]:
    """resolve -> prepare -> commit; returns the commit's envelope (ok or refused)."""
    review = server.ok("resolve_record", {"query": title, "collection_id": collection_id})
    prepared = server.envelope(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": data},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "reliability test: a new record",
            "clarification": CLARIFIED,
        },
    )
    if not prepared["ok"]:
        return prepared
    return server.envelope("commit_write", {"action_id": prepared["result"]["action_id"]})


def import_rows(tag: str, count: int = 100) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`count` rows with unrelated titles, and links chaining them plus some cross links."""
    rows = [
        {"key": f"r{index}", "title": f"{tag} {uuid.uuid4().hex}", "data": {"n": index}}
        for index in range(count)
    ]
    links = [
        {"source": {"row": f"r{i}"}, "relationship_type": "follows", "target": {"row": f"r{i - 1}"}}
        for i in range(1, count)
    ]
    links += [
        {"source": {"row": f"r{i}"}, "relationship_type": "cites", "target": {"row": f"r{i // 2}"}}
        for i in range(2, count, 2)
    ]
    return rows, links


def decisions_for(prepared: dict[str, Any]) -> dict[str, Any]:
    """create_anyway for every flagged row: the titles are random, any flag is a near miss."""
    return {
        key: {"decision": "create_anyway", "clarification": CLARIFIED}
        for key in prepared["needs_decision"]
    }


def prepare_import(server: RawServer, collection_id: str, tag: str, count: int = 100):
    rows, links = import_rows(tag, count)
    prepared = server.ok(
        "prepare_import",
        {
            "collection_id": collection_id,
            "rows": rows,
            "links": links,
            "decision_reason": "reliability test: a large import",
        },
    )
    commit = {"action_id": prepared["action_id"], "decisions": decisions_for(prepared)}
    return prepared, commit, links
