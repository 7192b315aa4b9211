"""A py-spy profile of the measured stdio server while a missed row's calls run again.

A row that misses its target is explained by where the server spent its time: the runner
re-runs the phase that missed (fewer rounds) with py-spy recording the measured server, and
prints the summary under the row (spy.summarize: the project's functions by inclusive
samples, and the well-known costs such as SQL and the tool bodies). The re-run is not timed,
so the profiler's own cost never reaches a figure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.spy import py_spy, summarize

ATTACH_SECONDS = 1.5  # py-spy attaches before the first call it should see
STOP_SECONDS = 30


def mcp_serve_children() -> list[int]:
    """Process IDs of the mcp_serve servers this process started (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"mcp_serve" in cmdline:
                found.append(int(pid))
    return sorted(set(found))


async def profiled(pid: int | None, rerun: Callable[[], Awaitable[Any]]) -> list[str]:
    """Run `rerun` with py-spy recording `pid`; the summary's lines."""
    import asyncio

    spy = py_spy()
    if spy is None or pid is None:
        await rerun()
        reason = "py-spy is not available" if spy is None else "the server's pid is unknown"
        return [f"  profile: {reason}"]
    with tempfile.TemporaryDirectory(prefix="anchor-profile-") as tmp:
        out = Path(tmp) / "profile.txt"
        recorder = subprocess.Popen(
            [*spy, "record", "--pid", str(pid), "--nonblocking", "--rate", "200"]
            + ["--format", "raw", "--output", str(out), "--duration", "600"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # SIGINT to the group stops py-spy under `uv tool run` too
        )
        await asyncio.sleep(ATTACH_SECONDS)
        try:
            await rerun()
        finally:
            os.killpg(recorder.pid, signal.SIGINT)  # py-spy writes its file on SIGINT
            try:
                _, err = recorder.communicate(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(recorder.pid, signal.SIGKILL)
                _, err = recorder.communicate()
        if not out.exists():
            return [f"  profile: py-spy wrote nothing: {err.decode(errors='replace')[-300:]}"]
        return summarize(out.read_text(), top=15, whose="the measured server's")


def attach(rows: list[Row], lines: list[str]) -> None:
    """Put the profile under the first missed row, naming the other rows it covers."""
    missed = [row for row in rows if row.passed is False]
    if not missed or not lines:
        return
    covered = ", ".join(row.what.split(",")[0] for row in missed[1:])
    head = ["profile of the re-run phase" + (f" (also covers: {covered})" if covered else "")]
    missed[0].profile = ["  " + head[0], *lines]
