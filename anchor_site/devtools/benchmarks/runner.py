"""Run the areas: a worker process per backend, each on a database made for the run.

The command never touches the configured database: for SQLite a worker (and the servers it
starts) gets a file in a temporary directory; for PostgreSQL a scratch database is created
beside the one DATABASE_URL names and dropped afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from anchor_site.devtools.benchmarks import (
    agendas,
    approvals,
    data,
    locks,
    meaning,
    peer_tasks,
    profile,
)
from anchor_site.devtools.benchmarks.measure import Row, Sizes
from anchor_site.devtools.benchmarks.names import imports, name_rule, resolution
from anchor_site.devtools.benchmarks.process import memory, startup, tool_list
from anchor_site.devtools.benchmarks.server import Phase, Writer, client_session
from anchor_site.devtools.benchmarks.session import guarded, round_trips
from anchor_site.devtools.benchmarks.store import graph, restore, search
from workflow.scope import Scope

AREAS = (  # noqa: SIM905 (one line of names reads better than eighteen)
    "tool_list name_rule startup memory resolution imports meaning stdio batches writes guarded "
    "search graph restore agendas approvals locks peer"
).split()
SESSION_AREAS = ("stdio", "batches", "writes", "guarded")  # one server and client session
PROCESS_ONLY = {"tool_list", "name_rule", "memory", "peer"}  # measured once, on SQLite
OPT_IN = {"peer"}  # runs only when --only names it: it fetches the memory server with npx


def in_worker(vendor: str, args: list[str], *, progress: bool) -> dict[str, Any]:
    """`manage.py benchmark --worker FILE *args` on a database of its own: the rows and lines it
    saved to FILE, and a row saying so if it failed."""
    with tempfile.TemporaryDirectory(prefix="anchor-bench-") as tmp, ExitStack() as scratch:
        # The developer settings: the tools are not in the production settings.
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="anchor_site.settings_dev")
        if vendor == "sqlite":
            env.pop("DATABASE_URL", None)
            env["ANCHOR_DB_PATH"] = str(Path(tmp) / "benchmark.db")
        else:
            url = data.scratch_database(os.environ["DATABASE_URL"])
            env["DATABASE_URL"] = scratch.enter_context(url)
        out = Path(tmp) / "out.json"
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        done = subprocess.run(
            [sys.executable, manage, "benchmark", "--worker", str(out), *args],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=None if progress else subprocess.DEVNULL,
            check=False,
        )
        report = json.loads(out.read_text()) if out.exists() else {"rows": [], "lines": []}
    if done.returncode:
        failed = Row("benchmark worker", None, "", note=f"exit {done.returncode}")
        report["rows"].append(failed.as_dict())
    return dict(report)


def run_backend(
    vendor: str, sizes: Sizes, areas: list[str], *, progress: bool
) -> list[dict[str, Any]]:
    areas = [a for a in areas if vendor == "sqlite" or a not in PROCESS_ONLY]
    if not areas:
        return []
    args = ["--plan", json.dumps(asdict(sizes)), "--only", ",".join(areas)]
    return list(in_worker(vendor, args, progress=progress)["rows"])


def work(
    sizes: Sizes, areas: list[str], save: Callable[[list[Row]], None], say: Callable[[str], None]
) -> None:
    """In the worker: Django is configured against the run's own database."""
    vendor = connection.vendor
    rows: list[Row] = []

    def area(name: str, fn: Callable[[], list[Row]]) -> None:
        if name not in areas:
            return
        say(f"[{vendor}] {name} ...")
        try:
            found = fn()
        except Exception as exc:  # one broken area must not hide the others' figures
            traceback.print_exc(file=sys.stderr)
            found = [Row(name, None, "", note=f"error: {type(exc).__name__}: {exc}")]
        for row in found:
            say(f"[{vendor}]   {row.what}: {row.value}")
        rows.extend(found)
        save(rows)

    if "peer" in areas:  # it brings its own stores: first, and alone without waiting for data
        area("peer", peer_tasks.run)
        if areas == ["peer"]:
            return
    say(f"[{vendor}] migrating and generating names ...")
    call_command("migrate", interactive=False, verbosity=0, stdout=sys.stderr)
    save(rows)
    ctx = data.context()
    scope = Scope(data.WORKSPACE, data.ACTOR)
    names = data.person_names(sizes.names)
    people = data.collection(ctx, "bench people").pk
    data.bulk_insert(people, data.people(names))
    import_names = data.person_names(sizes.import_names, seed=5)
    applicants = data.collection(ctx, "bench applicants").pk
    data.bulk_insert(applicants, data.people(import_names))
    linked = data.linked_record(ctx)

    area("tool_list", tool_list.run)
    area("name_rule", name_rule.run)
    area("startup", lambda: startup.run(sizes))
    area("memory", lambda: memory.run(people, len(names), data.typo(names[1], seed=3)))
    area("resolution", lambda: resolution.run(sizes, scope, people, names))
    area("imports", lambda: imports.run(sizes, data.WORKSPACE, applicants, import_names))
    # Before the search area fills the workspace: this one is timed at sizes.meaning_records.
    area("meaning", lambda: meaning.run(sizes, ctx))
    if session := [a for a in SESSION_AREAS if a in areas]:
        areas.append("+".join(session))
        area(areas[-1], lambda: session_rows(sizes, session, linked, vendor))
    area("search", lambda: search.run(sizes, ctx))
    area("graph", lambda: graph.run(sizes, ctx))
    area("restore", lambda: restore.run(sizes))
    area("agendas", lambda: agendas.run(sizes))
    area("approvals", approvals.run)
    area("locks", lambda: locks.run(sizes))


def session_rows(
    sizes: Sizes, areas: list[str], linked: data.LinkedRecord, vendor: str
) -> list[Row]:
    """The round-trip areas on the long history, in a server started after it was built, with
    a second server writing into the measured collections between calls. A phase whose rows
    miss runs again, shorter and untimed, under py-spy unless profiling is off."""
    rows = [data.history(sizes, data.context())]
    events = data.events()
    # Each phase counts what its rows compare against first: the ORM cannot run inside the
    # client's event loop.
    phases: list[Phase] = []
    if "stdio" in areas:
        phases.append(round_trips.stdio_phase(linked, events))
    if "batches" in areas:
        phases.append(round_trips.batches_phase(linked, events))
    if "writes" in areas:
        phases.append(guarded.writes_phase(linked, sizes, vendor))
    if "guarded" in areas:
        phases += guarded.phases(sizes, events)
    again = replace(sizes, calls=min(sizes.calls, 100), repeat=min(sizes.repeat, 5))

    async def over_stdio() -> None:
        async with client_session() as session:
            started = profile.mcp_serve_children()  # before the second server starts
            measured = started[0] if len(started) == 1 else None
            async with client_session() as second:
                writer = Writer(second)
                for run in phases:
                    found = await run(session, writer, sizes)
                    if sizes.profile and any(row.passed is False for row in found):
                        whose = "the measured server's"
                        with profile.spied(measured, top=15, whose=whose) as lines:
                            await run(session, writer, again)
                        profile.attach(found, lines)
                    rows.extend(found)

    asyncio.run(over_stdio())
    return rows
