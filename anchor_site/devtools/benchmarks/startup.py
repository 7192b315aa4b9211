"""mcp_serve start-up and shut-down on an existing, migrated database.

Start-up is spawn to initialize result; its reference is a bare interpreter start (`python -c
pass`) timed in the same run: the part of start-up no change to Anchor can remove. Shut-down is
end of input (a client closing the pipe) to exit status 0, after one tool call has run.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import RawServer

AREA = "startup"


def run(sizes: Sizes) -> list[Row]:
    starts, floors, exits = [], [], []
    for _ in range(sizes.startups):
        server = RawServer()
        try:
            starts.append(server.initialize())
            server.call("list_collections", {})
        finally:
            exits.append(server.close())
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floors.append(time.perf_counter() - started)
    median = statistics.median(starts)
    exit_median = statistics.median(exits)
    return [
        Row(
            AREA,
            f"mcp_serve start to initialize result, existing database ({sizes.startups} starts)",
            median,
            "s",
            p95=max(starts),
            target="< 1.5 s",
            passed=median < 1.5,
            reference=statistics.median(floors),
            reference_what="bare interpreter start (python -c pass)",
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
