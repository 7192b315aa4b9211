"""mcp_serve start-up (spawn to initialize result) and shut-down (end of input to exit, after a
tool call) on a migrated database, against a no-op FastMCP server started the same way: the part
of start-up no change to Anchor can remove. A first start on a new database (a SQLite file, or
a PostgreSQL database beside the run's) is measured against that database's next start."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

from django.db import connection

from anchor_site.devtools.benchmarks.data import scratch_database
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import RawServer, command, server_env

NOOP_FASTMCP = [
    sys.executable,
    "-c",
    "from mcp.server.fastmcp import FastMCP; FastMCP('noop').run('stdio')",
]
START_TARGET_RATIO = 1.5
FIRST_START_TARGET_RATIO = 2
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*([\w.]+)")


def import_self_time(argv: list[str]) -> Counter[str]:
    """Microseconds of import self time (`-X importtime`) by top-level package, for a server
    started with its input closed: it imports, initializes nothing, exits."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=server_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    found: Counter[str] = Counter()
    for match in IMPORT_LINE.finditer(done.stderr):
        found[match[2].split(".")[0]] += int(match[1])
    return found


def imports_beyond_noop() -> str:
    """What mcp_serve imports that the no-op server does not, costliest first: why a miss."""
    noop = import_self_time(NOOP_FASTMCP)
    extra = Counter({k: us for k, us in import_self_time(command()).items() if k not in noop})
    listed = ", ".join(f"{name} {us / 1000:.0f} ms" for name, us in extra.most_common(6))
    return f"imported beyond the no-op (importtime self time): {listed}"


def first_and_later_start(path: Path) -> tuple[float, float]:
    """Spawn to initialize result on a new database, then on the same database again."""
    postgresql = connection.vendor == "postgresql"
    with scratch_database(os.environ["DATABASE_URL"]) if postgresql else nullcontext("") as url:
        starts = []
        for _ in range(2):
            with RawServer(None, ANCHOR_DB_PATH=str(path), DATABASE_URL=url) as server:
                starts.append(server.startup_s)
    return starts[0], starts[1]


def run(sizes: Sizes) -> list[Row]:
    # One untimed start of each: the first after an install or an edit compiles bytecode.
    for argv in (None, NOOP_FASTMCP):
        with RawServer(argv):
            pass
    starts, floors, exits = [], [], []
    for _ in range(sizes.startups):
        with RawServer() as server:
            server.call("list_collections", {})
        with RawServer(NOOP_FASTMCP) as noop:
            pass
        starts.append(server.startup_s)
        exits.append(server.stop_s)
        floors.append(noop.startup_s)
    with tempfile.TemporaryDirectory() as scratch:
        firsts, laters = zip(
            *(
                first_and_later_start(Path(scratch) / f"{each}.db")
                for each in range(sizes.startups)
            ),
            strict=True,
        )
    median, floor = statistics.median(starts), statistics.median(floors)
    passed = median <= START_TARGET_RATIO * floor
    first, later = statistics.median(firsts), statistics.median(laters)
    return [
        Row(
            f"mcp_serve start to initialize result, existing database ({sizes.startups} starts)",
            median,
            "s",
            p95=max(starts),
            target=f"<= {START_TARGET_RATIO}x no-op FastMCP start",
            passed=passed,
            reference=floor,
            reference_what="no-op FastMCP server, spawn to initialize result, same run",
            note="" if passed else imports_beyond_noop(),
        ),
        Row(
            f"mcp_serve end of input to clean exit, after a tool call ({sizes.startups} stops)",
            statistics.median(exits),
            "s",
            p95=max(exits),
            target="< 2 s",
            passed=statistics.median(exits) < 2,
        ),
        Row(
            f"mcp_serve start to initialize result, new database ({sizes.startups} starts)",
            first,
            "s",
            p95=max(firsts),
            target=f"<= {FIRST_START_TARGET_RATIO}x a later start",
            passed=first <= FIRST_START_TARGET_RATIO * later,
            reference=later,
            reference_what="the same database's next start, same run",
        ),
    ]
