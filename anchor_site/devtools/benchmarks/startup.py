"""mcp_serve start-up and shut-down on an existing, migrated database.

Start-up is spawn to initialize result; its reference is a no-op FastMCP server (the SDK's own
server with no tools, on the same interpreter) started and initialized the same way, side by
side in the same run: the part of start-up no change to Anchor can remove. Shut-down is end of
input (a client closing the pipe) to exit status 0, after one tool call has run.
"""

from __future__ import annotations

import statistics
import sys

from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import RawServer

AREA = "startup"
# The floor: the SDK's FastMCP with nothing registered, serving stdio.
NOOP_FASTMCP = [
    sys.executable,
    "-c",
    "from mcp.server.fastmcp import FastMCP; FastMCP('noop').run('stdio')",
]
START_TARGET_RATIO = 1.5


def run(sizes: Sizes) -> list[Row]:
    starts, floors, exits = [], [], []
    for _ in range(sizes.startups):
        server = RawServer()
        try:
            starts.append(server.initialize())
            server.call("list_collections", {})
        finally:
            exits.append(server.close())
        noop = RawServer(NOOP_FASTMCP)
        try:
            floors.append(noop.initialize())
        finally:
            noop.close()
    median = statistics.median(starts)
    floor = statistics.median(floors)
    exit_median = statistics.median(exits)
    return [
        Row(
            AREA,
            f"mcp_serve start to initialize result, existing database ({sizes.startups} starts)",
            median,
            "s",
            p95=max(starts),
            target=f"<= {START_TARGET_RATIO}x no-op FastMCP start",
            passed=median <= START_TARGET_RATIO * floor,
            reference=floor,
            reference_what="no-op FastMCP server, spawn to initialize result, same run",
        ),
        Row(
            AREA,
            f"mcp_serve end of input to clean exit, after a tool call ({sizes.startups} stops)",
            exit_median,
            "s",
            p95=max(exits),
            target="< 2 s",
            passed=exit_median < 2,
        ),
    ]
