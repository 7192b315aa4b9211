"""Resident memory of mcp_serve (VmRSS, Linux only): idle, and after caching a large name scope."""

from __future__ import annotations

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.server import NOOP, RawServer


def run(names_collection: str, name_count: int, query: str) -> list[Row]:
    with RawServer() as server:
        server.call(NOOP, {})
        idle = server.resident_mb()
        server.call("resolve_record", {"query": query, "collection_id": names_collection})
        cached = server.resident_mb()
    return [
        Row(
            "resident memory of an idle mcp_serve",
            idle,
            "MB",
            target="< 150 MB",
            passed=None if idle is None else idle < 150,
            note="" if idle is not None else "no /proc on this system",
        ),
        Row(
            f"resident memory after caching {name_count:,} names",
            cached,
            "MB",
            target="< 250 MB",
            passed=None if cached is None else cached < 250,
            reference=idle,
            reference_what="the same server idle",
        ),
    ]
