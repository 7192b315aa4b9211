"""mcp_serve start-up and shut-down on an existing, migrated database.

Start-up is spawn to initialize result; its reference is a no-op FastMCP server (the SDK's own
server with no tools, on the same interpreter) started and initialized the same way, side by
side in the same run: the part of start-up no change to Anchor can remove. Shut-down is end of
input (a client closing the pipe) to exit status 0, after one tool call has run. A first start
is the same on a SQLite file that does not exist yet, against a later start on it.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.server import RawServer, command, server_env

AREA = "startup"
# The floor: the SDK's FastMCP with nothing registered, serving stdio.
NOOP_FASTMCP = [
    sys.executable,
    "-c",
    "from mcp.server.fastmcp import FastMCP; FastMCP('noop').run('stdio')",
]
START_TARGET_RATIO = 1.5
FIRST_START_TARGET_RATIO = 2
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*([\w.]+)")


def import_self_time_by_package(argv: list[str]) -> Counter[str]:
    """Microseconds of import (self time, `python -X importtime`) by top-level package, for a
    server started with its input already closed: it imports, initializes nothing, exits."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=server_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    by_package: Counter[str] = Counter()
    for match in IMPORT_LINE.finditer(done.stderr):
        by_package[match[2].split(".")[0]] += int(match[1])
    return by_package


def imports_beyond_noop() -> str:
    """What mcp_serve imports that the no-op server does not, costliest first: the profile
    that explains a start-up miss."""
    noop = import_self_time_by_package(NOOP_FASTMCP)
    served = import_self_time_by_package(command())
    extra = Counter({name: us for name, us in served.items() if name not in noop})
    listed = ", ".join(f"{name} {us / 1000:.0f} ms" for name, us in extra.most_common(6))
    return f"imported beyond the no-op (importtime self time): {listed}"


def warm_up(argv: list[str] | None = None) -> None:
    """One untimed start to initialize: the first start of either server after an install or
    an edit compiles its bytecode and reads its files from disk, which no later start does."""
    server = RawServer(argv)
    try:
        server.initialize()
    finally:
        server.close()


def first_and_later_start(directory: Path) -> tuple[float, float]:
    """Spawn to initialize result on a new SQLite file, then on the same file again."""
    directory.mkdir()
    times = []
    for _ in range(2):
        server = RawServer(ANCHOR_DB_PATH=str(directory / "new.db"), DATABASE_URL="")
        try:
            times.append(server.initialize())
        finally:
            server.close()
    return times[0], times[1]


def first_start_row(sizes: Sizes) -> Row:
    firsts, laters = [], []
    with tempfile.TemporaryDirectory() as scratch:
        first_and_later_start(Path(scratch) / "warm")  # builds the migrated template if needed
        for each in range(sizes.startups):
            first, later = first_and_later_start(Path(scratch) / str(each))
            firsts.append(first)
            laters.append(later)
    median, later = statistics.median(firsts), statistics.median(laters)
    return Row(
        AREA,
        f"mcp_serve start to initialize result, new SQLite file ({sizes.startups} starts)",
        median,
        "s",
        p95=max(firsts),
        target=f"<= {FIRST_START_TARGET_RATIO}x a later start",
        passed=median <= FIRST_START_TARGET_RATIO * later,
        reference=later,
        reference_what="the same file's next start, same run",
    )


def run(sizes: Sizes) -> list[Row]:
    warm_up()
    warm_up(NOOP_FASTMCP)
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
    passed = median <= START_TARGET_RATIO * floor
    exit_median = statistics.median(exits)
    return [
        Row(
            AREA,
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
            AREA,
            f"mcp_serve end of input to clean exit, after a tool call ({sizes.startups} stops)",
            exit_median,
            "s",
            p95=max(exits),
            target="< 2 s",
            passed=exit_median < 2,
        ),
        first_start_row(sizes),
    ]
