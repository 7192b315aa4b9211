"""The guarded create, and a second server that makes one before each measured call.

A team writes into one collection together: while one agent window reads or writes, another
adds records beside it. The measured server meets that here as it would in use: a second
`mcp_serve` (another process, with its own official client) makes a guarded create in the
collection the next measured call reads or writes, so every measured call starts from names
and history another process has just moved.
"""

from __future__ import annotations

import time

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.server import call
from workflow.mcp.client import ClientSession

# Written by the second server: words no generated name uses, so each create reviews clean.
WRITER_SUFFIX = "Wx"
NOTE = "another mcp_serve made a guarded create in that collection before each measured call"


async def guarded_create(session: ClientSession, collection_id: str, title: str) -> float:
    """resolve_record -> prepare_write create_record citing it -> commit_write; seconds."""
    started = time.perf_counter()
    review = await call(session, "resolve_record", {"query": title, "collection_id": collection_id})
    prepared = await call(
        session,
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "benchmark: guarded create",
        },
    )
    await call(session, "commit_write", {"action_id": prepared["action_id"]})
    return time.perf_counter() - started


class Writer:
    """The second server's client: one guarded create per `write`, each under a new name."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.names = data.person_names(50_000, seed=4_242)
        self.writes = 0

    async def write(self, collection_id: str) -> None:
        name = self.names[self.writes % len(self.names)]
        title = f"{name} {WRITER_SUFFIX} {self.writes}"
        self.writes += 1
        await guarded_create(self.session, collection_id, title)
