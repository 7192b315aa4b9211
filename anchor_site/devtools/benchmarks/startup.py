"""mcp_serve start-up: spawn to initialize result on an existing, migrated database.

The reference is a bare interpreter start (`python -c pass`) timed in the same run: the part of
start-up no change to Anchor can remove.
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
    starts, floors = [], []
    for _ in range(sizes.startups):
        server = RawServer()
        try:
            starts.append(server.initialize())
        finally:
            server.close()
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floors.append(time.perf_counter() - started)
    median = statistics.median(starts)
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
        )
    ]
