"""Why an in-process call missed its target: its SQL statements, their plans, Python's share.

The graph rows time selectors called in this process, not a server's replies, so their misses
are explained here rather than by py-spy on a server (profile.py). The missed call runs again,
untimed, three times:

1. with every statement it sends timed at the driver: the split of its wall time between the
   database and the Python around the statements;
2. (per statement) the backend's plan with real timings: PostgreSQL's EXPLAIN (ANALYZE,
   BUFFERS); SQLite's EXPLAIN QUERY PLAN has no timings, so the statement is also run on its
   own, rows fetched, and that time printed beside its plan;
3. under cProfile: the functions the time went to, by cumulative time.

The lines follow profile.attach's layout, for Row.profile.
"""

from __future__ import annotations

import cProfile
import pstats
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from anchor_site.devtools.benchmarks.measure import Row, Sizes

STATEMENT_CHARS = 200  # a statement's start names its shape; the plan says the rest
PLAN_LINES = 40
TOP_FUNCTIONS = 12


@dataclass
class Statement:
    sql: str
    params: Any
    seconds: float  # at the driver: cursor.execute


def explained(row: Row, sizes: Sizes, call: Callable[[], Any]) -> Row:
    """The row, with the profile of `call` under it if it missed and profiling is on."""
    if row.passed is False and sizes.profile:
        row.profile = explain(call)
    return row


def explain(call: Callable[[], Any]) -> list[str]:
    """Run `call` three more times (see the module) and return the profile's lines."""
    statements, wall = captured(call)
    wall = max(wall, 1e-9)
    in_database = sum(s.seconds for s in statements)
    lines = [
        "  profile of the missed call, run again in process (untimed): its SQL, plans, Python",
        f"  {_ms(wall)} wall: {_ms(in_database)} in {len(statements)} SQL statement(s) at the "
        f"driver ({100 * in_database / wall:.0f}%), {_ms(wall - in_database)} in Python",
    ]
    for number, statement in enumerate(statements, start=1):
        lines.append(f"  statement {number}, {_ms(statement.seconds)}: {_short(statement.sql)}")
        lines += ["      " + line for line in plan(statement)]
    return lines + python(call)


def captured(call: Callable[[], Any]) -> tuple[list[Statement], float]:
    """The statements `call` sends with their times, and its wall time.

    Timed around cursor.execute: on PostgreSQL it returns once every row has arrived; on
    SQLite once the first row is ready, which for a grouped and ordered statement (all these
    selectors send) is once the whole answer is computed, so only a few rows' stepping is
    left to count as Python."""
    found: list[Statement] = []

    def timed(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            found.append(Statement(sql, params, time.perf_counter() - started))

    started = time.perf_counter()
    with connection.execute_wrapper(timed):
        call()
    return found, time.perf_counter() - started


def plan(statement: Statement) -> list[str]:
    """The backend's plan of one statement, with real timings; only reads are explained
    (EXPLAIN ANALYZE runs the statement)."""
    if not statement.sql.lstrip().upper().startswith(("SELECT", "WITH")):
        return ["(not a read: no plan)"]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement.sql}", statement.params)
            lines = [row[0] for row in cursor.fetchall()]
            head = "plan, EXPLAIN (ANALYZE, BUFFERS):"
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {statement.sql}", statement.params)
            lines = _tree(cursor.fetchall())
            started = time.perf_counter()
            cursor.execute(statement.sql, statement.params)
            rows = len(cursor.fetchall())
            head = (
                f"plan, EXPLAIN QUERY PLAN; run alone: {_ms(time.perf_counter() - started)}, "
                f"{rows:,} rows fetched:"
            )
    if len(lines) > PLAN_LINES:
        lines = [*lines[:PLAN_LINES], f"... {len(lines) - PLAN_LINES} more plan lines"]
    return [head, *("  " + line for line in lines)]


def _tree(rows: list[tuple[Any, ...]]) -> list[str]:
    """SQLite's (id, parent, notused, detail) rows indented under their parents."""
    depth: dict[int, int] = {0: -1}
    lines = []
    for node, parent, _, detail in rows:
        depth[node] = depth.get(parent, -1) + 1
        lines.append("  " * depth[node] + detail)
    return lines


def python(call: Callable[[], Any]) -> list[str]:
    """The call under cProfile: the project's functions and the built-ins (the driver's
    execute and fetch among them) with the most cumulative time. Django's and the benchmark's
    own frames are left out: they only wrap these. The profiler's overhead is included, so
    the shares, not the figures, are what to read."""
    profiler = cProfile.Profile()
    profiler.runcall(call)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    listed = [(where, figures) for where, figures in stats.items() if _listed(where[0])]
    listed.sort(key=lambda item: item[1][3], reverse=True)
    lines = ["  top functions by cumulative time (cProfile, one more run; project and built-in):"]
    for (filename, line, name), (_, calls, own, cumulative, _) in listed[:TOP_FUNCTIONS]:
        lines.append(
            f"    {_ms(cumulative):>10} cumulative {_ms(own):>10} own {calls:>7,} calls  "
            + (_builtin(name) if filename == "~" else f"{_project_path(filename)}:{line}({name})")
        )
    return lines


def _listed(filename: str) -> bool:
    if filename == "~":  # a built-in, e.g. <method 'fetchall' of 'sqlite3.Cursor' objects>
        return True
    path = _project_path(filename)
    return path != filename and not path.startswith((".venv", "anchor_site/devtools/benchmarks"))


def _builtin(name: str) -> str:
    """A built-in's name without the address some carry (<function f at 0x7f...>)."""
    return re.sub(r" at 0x[0-9a-f]+>", ">", name)


def _project_path(filename: str) -> str:
    """The file relative to the project, or as it was when it is elsewhere."""
    path = Path(filename)
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else filename


def _short(sql: str) -> str:
    flat = " ".join(sql.split())
    return flat if len(flat) <= STATEMENT_CHARS else flat[: STATEMENT_CHARS - 3] + "..."


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"
