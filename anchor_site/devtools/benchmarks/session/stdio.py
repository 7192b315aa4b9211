"""Round trips over stdio from the official client: get_record_context against a no-op tool,
called alternately on the same server (so load on the machine hits both alike)."""

from __future__ import annotations

import json
from functools import partial

from anchor_site.devtools.benchmarks.data import WORKSPACE, LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, timed_row
from anchor_site.devtools.benchmarks.profile import captured
from anchor_site.devtools.benchmarks.server import (
    NOOP_WHAT,
    NOTE,
    Phase,
    Writer,
    call,
    noop,
    timed_call,
)
from records.selectors import record_context
from workflow.mcp.client import ClientSession

WARMUP = 20


def phase(linked: LinkedRecord, events: int) -> Phase:
    arguments = {"record_id": linked.record_id, "relationship_limit": 20, "event_limit": 10}
    # The measured call's SQL statements, run in this process.
    statements, _ = captured(partial(record_context, workspace_id=WORKSPACE, **arguments))

    async def run(session: ClientSession, writer: Writer, sizes: Sizes) -> list[Row]:
        first = await call(session, "get_record_context", arguments)
        for _ in range(WARMUP):
            await call(session, "get_record_context", arguments)
            await noop(session)
        context, noops = Samples(), Samples()
        for _ in range(sizes.calls):
            await writer.write(linked.collection_id)
            context.add(await timed_call(session, "get_record_context", arguments))
            noops.add(await noop(session))
        size = len(json.dumps(first, ensure_ascii=False).encode())
        links = sum(len(first["links"][k]) for k in ("outgoing", "incoming"))
        return [
            timed_row(
                f"stdio round trip, get_record_context ({links} links, "
                f"{len(first['events'] or [])} events), {sizes.calls:,} calls, {events:,} audit "
                "events, fresh server",
                context,
                at_most=(1.5, noops, "no-op"),
                reference_what=NOOP_WHAT,
                note=f"reply {size / 1024:.1f} KiB, {len(statements)} SQL statements; {NOTE}",
            )
        ]

    return run
