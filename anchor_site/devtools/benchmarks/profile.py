"""Why a row missed, printed under it: py-spy on a server while the missed phase runs again, or
an in-process call's SQL statements, plans and Python time. Re-runs are untimed, so a
profiler's own cost never reaches a figure."""

from __future__ import annotations

import cProfile
import os
import pstats
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat, timed_row

ATTACH_SECONDS = 1.5  # py-spy attaches before the first call it should see


def py_spy() -> list[str] | None:
    if found := shutil.which("py-spy"):
        return [found]
    uv = shutil.which("uv")
    probe = [uv or "uv", "tool", "run", "py-spy", "--version"]
    return probe[:-1] if uv and subprocess.run(probe, capture_output=True).returncode == 0 else None


@contextmanager
def spied(
    pid: int | None, *, subprocesses: bool = False, keep: str = "", **summary: Any
) -> Iterator[list[str]]:
    """py-spy records `pid` (and its children) for the block; the yielded list then gets the
    summary of what it saw, or why there is none. `keep`: where to copy the raw stacks."""
    spy = py_spy()
    found: list[str] = []
    if spy is None or pid is None:
        yield found
        why = "py-spy is not available" if pid else "the server's pid is unknown"
        found.append(f"  profile: {why}")
        return
    with tempfile.TemporaryDirectory(prefix="anchor-profile-") as tmp:
        out = Path(tmp) / "profile.txt"
        recorder = subprocess.Popen(
            [*spy, "record", "--pid", str(pid), "--nonblocking", "--rate", "200"]
            + ["--format", "raw", "--output", str(out), "--duration", "600"]
            + (["--subprocesses"] if subprocesses else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # SIGINT to the group stops py-spy under `uv tool run` too
        )
        time.sleep(ATTACH_SECONDS)
        try:
            yield found
        finally:
            os.killpg(recorder.pid, signal.SIGINT)  # py-spy writes its file on SIGINT
            try:
                _, err = recorder.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(recorder.pid, signal.SIGKILL)
                _, err = recorder.communicate()
        if not out.exists():
            found.append(f"  py-spy wrote no profile: {err.decode(errors='replace')[-300:]}")
            return
        if keep:
            shutil.copyfile(out, keep)
            found.append(f"  raw collapsed stacks: {keep}")
        found += summarize(out.read_text(), **summary)


def mcp_serve_children() -> list[int]:
    """Process IDs of the mcp_serve servers this process started (Linux /proc)."""
    found = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in children:
            try:
                if b"mcp_serve" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(int(pid))
            except OSError:
                continue
    return sorted(found)


def attach(rows: list[Row], lines: list[str]) -> None:
    """Put the profile under the first missed row, naming the other rows it covers."""
    missed = [row for row in rows if row.passed is False]
    if missed and lines:
        covered = ", ".join(row.what.split(",")[0] for row in missed[1:])
        head = "  profile of the re-run phase" + (f" (also covers: {covered})" if covered else "")
        missed[0].profile = [head, *lines]


# Frames that stand for well-known costs: (label, "function (file)" as py-spy names it).
MARKERS = (
    ("waiting for PostgreSQL's replies", "Connection.wait (psycopg/connection.py)"),
    ("SQL statements, sent and waited for", "CursorWrapper._execute (django/db/backends/utils.py)"),
    ("taking a connection", "BaseDatabaseWrapper.connect (django/db/backends/base/base.py)"),
    ("token authentication", "access_token_find (records/selectors/memberships.py)"),
    ("workspace from membership", "scope_for_user (anchor_site/http/workspace.py)"),
    ("MCP session lookup", "AnchorMCPView._owned_session (anchor_site/http/views.py)"),
    ("tool bodies (run_tool)", "run_tool (workflow/mcp/envelope.py)"),
    ("  resolve_record", "resolve_record (workflow/resolution.py)"),
    ("  prepare_write", "prepare_write (workflow/actions.py)"),
    ("  commit_write", "commit_write (workflow/actions.py)"),
    ("  search_records", "ReadTools.search_records (workflow/mcp/tools/reads.py)"),
    ("  get_record_context", "record_context (records/selectors/context.py)"),
    ("  prepare_import", "prepare_import (workflow/actions.py)"),
    ("  commit_import", "commit_import (workflow/actions.py)"),
    ("  batch_read", "batch_read (workflow/batch_read.py)"),
    ("transaction commits", "BaseDatabaseWrapper._commit (django/db/backends/base/base.py)"),
    ("event loops waiting for work", "EpollSelector.select (selectors.py)"),
    ("threads handing work over (Condition.wait)", "Condition.wait (threading.py)"),
)
# Inclusive figures for the project and the libraries it drives only: thread, asgiref and
# middleware entry frames are in nearly every sample and say nothing.
LISTED = (
    "anchor_site/",
    "workflow/",
    "records/",
    "psycopg/",
    "django/db/",
    "mcp",
    "rest_framework/",
)


def summarize(raw: str, top: int = 20, *, whose: str = "the workers'") -> list[str]:
    """py-spy's collapsed stacks: the share inside each marker, the top listed functions by
    inclusive samples (once per stack) and the top functions by own samples."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [  # 'Class.func (pkg/mod.py:12)' -> 'Class.func (pkg/mod.py)'
            f"{name} ({where.rstrip(')').rsplit(':', 1)[0]})"
            for name, _, where in (f.partition(" (") for f in stack.split(";"))
            if where and not name.startswith("process ")
        ]
        if not frames or not count.isdigit():
            continue
        inclusive.update(dict.fromkeys(frames, int(count)))
        own[frames[-1]] += int(count)
        marked.update({label: int(count) for label, marker in MARKERS if marker in frames})
    total = sum(own.values())
    if not total:
        return ["  py-spy recorded no samples"]
    listed = [(f, n) for f, n in inclusive.most_common() if f.split(" (", 1)[1].startswith(LISTED)]
    return [
        f"  py-spy: {total:,} samples of {whose} active threads (idle left out); share inside:",
        *(
            f"    {100 * marked[label] / total:5.1f}%  {label}"
            for label, _ in MARKERS
            if marked[label]
        ),
        "  top functions by inclusive samples (cumulative), project and its libraries:",
        *(f"    {100 * n / total:5.1f}%  {frame}" for frame, n in listed[:top]),
        "  top functions by own samples:",
        *(f"    {100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(8)),
    ]


# --- an in-process call: its SQL, their plans, and the Python around them ----------------------


def explained(row: Row, sizes: Sizes, call: Callable[[], Any]) -> Row:
    """The row, with the profile of `call` under it if it missed and profiling is on."""
    if row.passed is False and sizes.profile:
        row.profile = explain(call)
    return row


def compared(
    what: str,
    sizes: Sizes,
    call: Callable[[], Any],
    reference: Callable[[], Any],
    *,
    passed: Callable[[float, float], bool],
    **fields: Any,
) -> Row:
    """`call` timed against `reference` alike; `passed` judges their medians (ms)."""
    times = max(3, sizes.reference_repeat * 2)
    ours, floor = repeat(call, times), repeat(reference, times)
    judged = passed(ours.median_ms, floor.median_ms)
    row = timed_row(what, ours, passed=judged, reference=floor.median_ms, **fields)
    return explained(row, sizes, call)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def captured(call: Callable[[], Any]) -> tuple[list[tuple[str, Any, float]], float]:
    """Run `call`: its statements (sql, params, seconds) timed at the driver (cursor.execute:
    on PostgreSQL once every row arrived; on SQLite once the first row is ready, which for the
    grouped and ordered statements these selectors send is the whole answer), and its wall time."""
    statements: list[tuple[str, Any, float]] = []

    def timed(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements.append((sql, params, time.perf_counter() - started))

    started = time.perf_counter()
    with connection.execute_wrapper(timed):
        call()
    return statements, max(time.perf_counter() - started, 1e-9)


def explain(call: Callable[[], Any]) -> list[str]:
    """Run `call` again: its statements as `captured` times them, each one's plan, cProfile."""
    statements, wall = captured(call)
    in_db = sum(seconds for _, _, seconds in statements)
    lines = [
        "  profile of the missed call, run again in process (untimed): its SQL, plans, Python",
        f"  {_ms(wall)} wall: {_ms(in_db)} in {len(statements)} SQL statement(s) at the "
        f"driver ({100 * in_db / wall:.0f}%), {_ms(wall - in_db)} in Python",
    ]
    for number, (sql, params, seconds) in enumerate(statements, start=1):
        flat = " ".join(sql.split())
        lines.append(
            f"  statement {number}, {_ms(seconds)}: {flat[:197]}{'...' * (len(flat) > 200)}"
        )
        lines += ["      " + line for line in plan(sql, params)]
    return lines + python(call)


def plan(sql: str, params: Any) -> list[str]:
    """The backend's plan with real timings; reads only (EXPLAIN ANALYZE runs the statement).
    SQLite's plan has no timings, so the statement is also run alone, its time printed."""
    if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
        return ["(not a read: no plan)"]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
            lines = [row[0] for row in cursor.fetchall()]
            head = "plan, EXPLAIN (ANALYZE, BUFFERS):"
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            depth: dict[int, int] = {0: -1}
            lines = []
            for node, parent, _, detail in cursor.fetchall():  # indented under their parents
                depth[node] = depth.get(parent, -1) + 1
                lines.append("  " * depth[node] + detail)
            started = time.perf_counter()
            cursor.execute(sql, params)
            fetched = len(cursor.fetchall())
            alone = _ms(time.perf_counter() - started)
            head = f"plan, EXPLAIN QUERY PLAN; run alone: {alone}, {fetched:,} rows fetched:"
    if len(lines) > 40:
        lines = [*lines[:40], f"... {len(lines) - 40} more plan lines"]
    return [head, *("  " + line for line in lines)]


def python(call: Callable[[], Any]) -> list[str]:
    """The call under cProfile: the project's functions and the built-ins (the driver's execute
    and fetch among them) by cumulative time; Django's and the benchmark's frames only wrap
    these. The profiler's overhead is included: read the shares, not the figures."""
    profiler = cProfile.Profile()
    profiler.runcall(call)
    base = Path(settings.BASE_DIR)

    def where(filename: str) -> str:
        path = Path(filename)
        return str(path.relative_to(base)) if path.is_relative_to(base) else filename

    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    listed = sorted(
        (
            (key, figures)
            for key, figures in stats.items()
            if key[0] == "~"  # a built-in, e.g. <method 'fetchall' of 'sqlite3.Cursor' objects>
            or where(key[0]) != key[0]
            and not where(key[0]).startswith((".venv", "anchor_site/devtools"))
        ),
        key=lambda item: item[1][3],
        reverse=True,
    )
    lines = ["  top functions by cumulative time (cProfile, one more run; project and built-in):"]
    for (filename, line, name), (_, calls, own, cumulative, _) in listed[:12]:
        shown = (
            re.sub(r" at 0x[0-9a-f]+>", ">", name)
            if filename == "~"
            else f"{where(filename)}:{line}({name})"
        )
        lines.append(
            f"    {_ms(cumulative):>10} cumulative {_ms(own):>10} own {calls:>7,} calls  {shown}"
        )
    return lines
