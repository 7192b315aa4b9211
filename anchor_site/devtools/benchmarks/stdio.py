"""Round trips over stdio from the official client: get_record_context against a no-op tool.

Both tools are called alternately on the same server, so load on the machine hits both alike.
get_server_instructions is the closest to a no-op the server has: no database, a fixed text.
The server was started on the long history (history.build), and before each measured context
call another server makes a guarded create in the record's collection (writer.Writer), so the
call meets a collection another process has just written to.
"""

from __future__ import annotations

import json
import time
from typing import Any

from anchor_site.devtools.benchmarks.data import LinkedRecord
from anchor_site.devtools.benchmarks.measure import Row, Samples, Sizes, statements
from anchor_site.devtools.benchmarks.server import call
from anchor_site.devtools.benchmarks.writer import NOTE, Writer
from workflow.mcp.client import ClientSession

AREA = "stdio"
WARMUP = 20


def context_arguments(linked: LinkedRecord) -> dict[str, Any]:
    return {"record_id": linked.record_id, "relationship_limit": 20, "event_limit": 10}


def context_statements(linked: LinkedRecord) -> int:
    """SQL statements of the measured call, run in this process."""
    from anchor_site.devtools.benchmarks.data import WORKSPACE
    from records.selectors import record_context

    return statements(lambda: record_context(workspace_id=WORKSPACE, **context_arguments(linked)))


async def run(
    session: ClientSession,
    writer: Writer,
    sizes: Sizes,
    linked: LinkedRecord,
    events: int,
    statements_per_call: int,
) -> list[Row]:
    context_args = context_arguments(linked)
    first = await call(session, "get_record_context", context_args)
    for _ in range(WARMUP):
        await call(session, "get_record_context", context_args)
        await call(session, "get_server_instructions", {})
    context, noop = Samples(), Samples()
    for _ in range(sizes.calls):
        await writer.write(linked.collection_id)
        started = time.perf_counter()
        await call(session, "get_record_context", context_args)
        middle = time.perf_counter()
        await call(session, "get_server_instructions", {})
        context.seconds.append(middle - started)
        noop.seconds.append(time.perf_counter() - middle)
    size = len(json.dumps(first, ensure_ascii=False).encode())
    links = sum(len(first["links"][k]) for k in ("outgoing", "incoming"))
    shown = len(first["events"] or [])
    return [
        Row(
            AREA,
            f"stdio round trip, get_record_context ({links} links, {shown} events), "
            f"{sizes.calls:,} calls, {events:,} audit events, fresh server",
            context.median_ms,
            "ms",
            p95=context.p95_ms,
            target="<= 1.5x no-op",
            passed=context.median_ms <= 1.5 * noop.median_ms,
            reference=noop.median_ms,
            reference_what="get_server_instructions (no-op) on the same server",
            note=f"reply {size / 1024:.1f} KiB, {statements_per_call} SQL statements; {NOTE}",
        )
    ]
