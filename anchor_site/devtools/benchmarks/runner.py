"""Run the benchmark areas: a worker process per backend, each on a database made for the run.

The command never touches the configured database. For SQLite it points a worker (and the
mcp_serve processes that worker starts) at a file in a temporary directory; for PostgreSQL it
creates a scratch database beside the one DATABASE_URL names and drops it afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings

from anchor_site.devtools import DEV_SETTINGS_MODULE
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.scratch import ScratchDatabase

AREAS = (
    "tool_list",
    "name_rule",
    "startup",
    "memory",
    "resolution",
    "imports",
    "meaning",
    "stdio",
    "batches",
    "writes",
    "guarded",
    "search",
    "graph",
    "restored",
    "restore",
    "agendas",
    "approvals",
    "locks",
)
# Properties of the process, not of the database: measured once, on SQLite.
PROCESS_ONLY = {"tool_list", "name_rule", "memory"}


# --- the parent: one worker per backend --------------------------------------------------------


def run_backend(
    vendor: str, sizes: Sizes, areas: list[str], *, progress: bool
) -> list[dict[str, Any]]:
    if vendor == "postgresql":
        areas = [a for a in areas if a not in PROCESS_ONLY]
    if not areas:
        return []
    with tempfile.TemporaryDirectory(prefix="anchor-bench-") as tmp:
        env = dict(os.environ, DJANGO_SETTINGS_MODULE=DEV_SETTINGS_MODULE)
        scratch = None
        if vendor == "sqlite":
            env.pop("DATABASE_URL", None)
            env["ANCHOR_DB_PATH"] = str(Path(tmp) / "benchmark.db")
        else:
            scratch = ScratchDatabase(os.environ["DATABASE_URL"])
            env["DATABASE_URL"] = scratch.create()
        results = Path(tmp) / "rows.json"
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    str(Path(settings.BASE_DIR) / "manage.py"),
                    "benchmark",
                    "--worker",
                    str(results),
                    "--sizes",
                    json.dumps(sizes.to_dict()),
                    "--only",
                    ",".join(areas),
                ],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=None if progress else subprocess.DEVNULL,
                check=False,
            )
        finally:
            if scratch is not None:
                scratch.drop()
        rows = json.loads(results.read_text()) if results.exists() else []
        if done.returncode != 0:
            rows.append(
                Row(
                    "worker", "benchmark worker", None, "", note=f"exit {done.returncode}"
                ).as_dict()
            )
        return rows


# --- the worker: Django is configured against the run's own database ---------------------------


def work(sizes: Sizes, areas: list[str], results: Path, say: Callable[[str], None]) -> None:
    from django.core.management import call_command
    from django.db import connection

    from anchor_site.devtools.benchmarks import data

    vendor = connection.vendor
    rows: list[Row] = []

    def save() -> None:
        results.write_text(json.dumps([r.as_dict() for r in rows]))

    def area(name: str, fn: Callable[[], list[Row]]) -> None:
        if name not in areas:
            return
        say(f"[{vendor}] {name} ...")
        try:
            found = fn()
        except Exception as exc:  # one broken area must not hide the others' figures
            traceback.print_exc(file=sys.stderr)
            found = [Row(name, name, None, "", note=f"error: {type(exc).__name__}: {exc}")]
        for row in found:
            say(f"[{vendor}]   {row.what}: {row.value}")
        rows.extend(found)
        save()

    say(f"[{vendor}] migrating and generating names ...")
    call_command("migrate", interactive=False, verbosity=0, stdout=sys.stderr)
    ctx = data.context()
    from workflow.scope import Scope

    scope = Scope(data.WORKSPACE, data.ACTOR)
    names = data.person_names(sizes.names)
    people = data.collection(ctx, "bench people")
    data.bulk_insert(people.pk, data.people(names))
    import_names = data.person_names(sizes.import_names, seed=5)
    applicants = data.collection(ctx, "bench applicants")
    data.bulk_insert(applicants.pk, data.people(import_names))
    linked = data.linked_record(ctx)
    save()

    from anchor_site.devtools.benchmarks import (
        agendas,
        approvals,
        graph,
        imports,
        locks,
        meaning,
        memory,
        name_rule,
        resolution,
        restore,
        restored,
        search,
        startup,
        tool_list,
    )

    area("tool_list", tool_list.run)
    area("name_rule", name_rule.run)
    area("startup", lambda: startup.run(sizes))
    area("memory", lambda: memory.run(people.pk, len(names), data.typo(names[1], seed=3)))
    area("resolution", lambda: resolution.run(sizes, scope, people.pk, names))
    area("imports", lambda: imports.run(sizes, data.WORKSPACE, applicants.pk, import_names))
    # Before the search area fills the workspace to sizes.records: this one is timed at
    # sizes.meaning_records.
    area("meaning", lambda: meaning.run(sizes, ctx))
    session_areas = [a for a in ("stdio", "batches", "writes", "guarded") if a in areas]
    if session_areas:  # one server and client session for these
        areas.append("+".join(session_areas))
        area(areas[-1], lambda: _session_rows(sizes, session_areas, linked, vendor))
    area("search", lambda: search.run(sizes, ctx))
    area("graph", lambda: graph.run(sizes, ctx))
    area("restored", lambda: restored.run(sizes))
    area("restore", lambda: restore.run(sizes))
    area("agendas", lambda: agendas.run(sizes))
    area("approvals", approvals.run)
    area("locks", lambda: locks.run(sizes))


def _session_rows(sizes: Sizes, areas: list[str], linked: Any, vendor: str) -> list[Row]:
    """The round-trip areas on the long history, in a server started after it was built, with
    a second server writing into the measured collections between calls. A phase with a missed
    row runs again, shorter and untimed, under py-spy (profile.py) unless profiling is off."""
    from anchor_site.devtools.benchmarks import (
        batches,
        data,
        guarded,
        history,
        profile,
        stdio,
        writes,
    )
    from anchor_site.devtools.benchmarks.server import client_session
    from anchor_site.devtools.benchmarks.writer import Writer

    built = history.build(sizes, data.context())
    events = history.events()
    scopes = guarded.setup(sizes) if "guarded" in areas else None
    timings = None
    # Counted before the servers start: the ORM cannot run inside the client's event loop.
    context_statements = stdio.context_statements(linked) if "stdio" in areas else 0
    reporting_statements = batches.reporting_statements(linked) if "batches" in areas else 0
    profiles: dict[str, list[str]] = {}  # the writes' and guarded rows' profiles, for their rows
    again = replace(sizes, calls=min(sizes.calls, 100), repeat=min(sizes.repeat, 5))

    async def over_stdio() -> tuple[list[Row], float | None]:
        nonlocal timings
        rows: list[Row] = []
        rate = None
        async with client_session() as session:
            started = profile.mcp_serve_children()  # before the second server starts
            measured = started[0] if len(started) == 1 else None
            async with client_session() as second:
                writer = Writer(second)

                async def phase(run: Callable[[Sizes], Awaitable[list[Row]]]) -> list[Row]:
                    found = await run(sizes)
                    if sizes.profile and any(row.passed is False for row in found):
                        profile.attach(found, await profile.profiled(measured, lambda: run(again)))
                    return found

                if "stdio" in areas:
                    rows += await phase(
                        lambda s: stdio.run(session, writer, s, linked, events, context_statements)
                    )
                if "batches" in areas:
                    rows += await phase(
                        lambda s: batches.run(
                            session, writer, s, linked, events, reporting_statements
                        )
                    )
                if "writes" in areas:
                    rate, _ = await writes.run(session, sizes, linked)
                    if sizes.profile and rate < writes.TARGET_PER_S:
                        profiles["writes"] = await profile.profiled(
                            measured, lambda: writes.run(session, again, linked)
                        )
                if scopes is not None:
                    timings = guarded.Timings()
                    await guarded.measure_creates(session, writer, sizes, scopes, timings)
                    if sizes.profile and guarded.creates_missed(timings):
                        profiles["creates"] = await profile.profiled(
                            measured,
                            lambda: guarded.measure_creates(
                                session, writer, again, scopes, guarded.Timings()
                            ),
                        )
                    await guarded.measure_imports(session, writer, sizes, scopes, timings)
                    if sizes.profile and guarded.import_missed(timings):
                        profiles["imports"] = await profile.profiled(
                            measured,
                            lambda: guarded.measure_imports(
                                session, writer, again, scopes, guarded.Timings()
                            ),
                        )
        return rows, rate

    rows, rate = asyncio.run(over_stdio())
    rows.insert(0, built)
    if rate is not None:
        found = [writes.row(rate, writes.commit_floor(sizes.writes), sizes, vendor)]
        profile.attach(found, profiles.get("writes", []))
        rows += found
    if scopes is not None and timings is not None:
        found = guarded.rows(timings, sizes, scopes, events)
        profile.attach(found[:2], profiles.get("creates", []))
        profile.attach(found[2:], profiles.get("imports", []))
        rows += found
    return rows


# --- the table ------------------------------------------------------------------------------------


def _amount(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":
        if value < 1:  # a patch of microseconds still shows its figure
            return f"{value:.3f} ms"
        return f"{value:.1f} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "/s":
        return f"{value:,.0f} /s"
    if unit == "tokens":
        return f"{value:,.0f} tok"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:g} {unit}"


def _ratio(row: dict[str, Any]) -> str:
    ratio = row.get("ratio")
    if ratio is None:
        return "-"
    if row["unit"] in ("ms", "s") and ratio < 1:
        return f"{1 / ratio:.1f}x faster"
    return f"{ratio:.2f}x"


def _verdict(row: dict[str, Any]) -> str:
    if row["value"] is None and row["note"].startswith(("error", "exit")):
        return "ERROR"
    return {True: "PASS", False: "MISS", None: "-"}[row["passed"]]


def table(vendor: str, rows: list[dict[str, Any]]) -> list[str]:
    header = ("what", "median", "p95", "target", "reference", "ratio", "result")
    body = [
        (
            row["what"],
            _amount(row["value"], row["unit"]),
            _amount(row["p95"], row["unit"]),
            row["target"] or "-",
            _amount(row["reference"], row["unit"]),
            _ratio(row),
            _verdict(row),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    widths[0] = min(widths[0], 100)

    def fmt(line: tuple[str, ...]) -> str:
        first = line[0] if len(line[0]) <= widths[0] else line[0][: widths[0] - 1] + "…"
        cells = [first.ljust(widths[0])]
        cells += [cell.rjust(widths[i]) for i, cell in enumerate(line[1:], start=1)]
        return "  ".join(cells)

    out = [f"== {vendor} ==", fmt(header), "  ".join("-" * w for w in widths)]
    for row, line in zip(rows, body, strict=True):
        out.append(fmt(line))
        extra = []
        if row["reference_what"]:
            extra.append(f"reference: {row['reference_what']}")
        if row["note"]:
            extra.append(row["note"])
        if len(row["what"]) > widths[0]:
            extra.insert(0, row["what"])
        if extra:
            out.append("    " + "; ".join(extra))
        out.extend("  " + line for line in row.get("profile") or [])
    return out
