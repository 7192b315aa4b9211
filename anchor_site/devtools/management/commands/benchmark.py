"""Benchmark Anchor where an agent waits: resolution, imports, stdio round trips, start-up,
guarded writes, search at scale, traversal and aggregation at scale, tool list size, memory and
batches. The round-trip rows run on a long history (`--events` audit events) in a server
started after it was built, with a second server writing into the measured collections.

Data is generated in a temporary SQLite file (never the configured database) and, when
DATABASE_URL is set, in a scratch PostgreSQL database created and dropped by the run. Each row
prints its median, the target, a reference measured side by side in the same run, the ratio,
and PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from anchor_site.devtools.benchmarks import http_load, http_writes, runner
from anchor_site.devtools.benchmarks.measure import Sizes


class Command(BaseCommand):
    help = (
        "Generate data and time every area an agent waits on, on SQLite and (when "
        "DATABASE_URL is set) PostgreSQL; prints medians, targets, same-run references and "
        "PASS/MISS. The full run takes up to ~25 minutes; --quick about two."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--quick", action="store_true", help="Smaller data and fewer calls (~2 minutes)."
        )
        parser.add_argument(
            "--only",
            default="",
            help=f"Comma-separated areas to run: {', '.join(runner.AREAS)}.",
        )
        parser.add_argument(
            "--records",
            type=int,
            help=(
                "Records in the workspace for the search rows (default 1,000,000; quick "
                "100,000); the graph rows use a ledger of this many, and the meaning rows a "
                "workspace of this many, each at most 100,000; the locks and agendas rows a "
                "store of this many restored from an export, at most 50,000."
            ),
        )
        parser.add_argument(
            "--events",
            type=int,
            help=(
                "Audit events in the workspace the round-trip rows (stdio, batches, writes, "
                "guarded) run on, built as bulk records (default 1,000,000; quick 100,000)."
            ),
        )
        parser.add_argument(
            "--names",
            type=int,
            help="Names in the scope resolve_record scans (default 100,000; quick 20,000).",
        )
        parser.add_argument(
            "--calls",
            type=int,
            help="stdio round trips per tool (default 1,000; quick 200); writes are a fifth.",
        )
        parser.add_argument(
            "--repeat",
            type=int,
            help="Timed repetitions of in-process calls (default 20), and at most as many "
            "server starts (default 5).",
        )
        parser.add_argument(
            "--backend",
            choices=("all", "sqlite", "postgresql"),
            default="all",
            help="all: SQLite, plus PostgreSQL when DATABASE_URL is set.",
        )
        parser.add_argument(
            "--http",
            action="store_true",
            help=(
                "Team-mode load instead: the production server (gunicorn) on a scratch "
                "PostgreSQL database beside DATABASE_URL's, N concurrent clients over "
                "streamable HTTP; prints calls/s, p50 and p95 per N and profiles the highest N. "
                "--records sets the seeded records (default 5,000; quick 2,000)."
            ),
        )
        parser.add_argument(
            "--clients",
            default=",".join(str(n) for n in http_load.CLIENTS),
            help="With --http: the numbers of concurrent clients, comma-separated.",
        )
        parser.add_argument(
            "--seconds",
            type=float,
            help="With --http: wall time per number of clients (default 20; quick 5).",
        )
        parser.add_argument(
            "--no-profile",
            action="store_true",
            help=(
                "Skip py-spy: the untimed re-run of a round-trip phase whose row missed (off "
                "with --quick anyway), and with --http the profiled run at the highest N."
            ),
        )
        parser.add_argument(
            "--profile-out",
            default="",
            help="With --http: keep py-spy's raw collapsed stacks in this file.",
        )
        # The command re-runs itself as a worker per backend, against that run's database.
        parser.add_argument("--worker", help=argparse.SUPPRESS)
        parser.add_argument("--sizes", help=argparse.SUPPRESS)
        parser.add_argument("--http-worker", help=argparse.SUPPRESS)
        parser.add_argument("--http-plan", help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["http_worker"]:
            plan = http_load.Plan(**json.loads(options["http_plan"]))
            plan = replace(plan, clients=tuple(plan.clients))
            http_load.work(
                plan, Path(options["http_worker"]), self._say(options), http_writes.measure
            )
            return
        if options["http"]:
            self._http(options)
            return
        areas = self._areas(options["only"])
        if options["worker"]:
            sizes = Sizes(**json.loads(options["sizes"]))
            runner.work(sizes, areas, Path(options["worker"]), self._say(options))
            return
        sizes = self._sizes(options)
        backends = self._backends(options["backend"])
        progress = options["verbosity"] >= 1
        failed = False
        for vendor in backends:
            rows = runner.run_backend(vendor, sizes, areas, progress=progress)
            for line in runner.table(vendor, rows):
                self.stdout.write(line)
            self.stdout.write("")
            failed = failed or any(runner._verdict(r) == "ERROR" for r in rows)
        if failed:
            raise CommandError("some benchmark areas failed; see the ERROR rows above.")

    def _http(self, options: dict[str, Any]) -> None:
        url = os.environ.get("DATABASE_URL", "").strip()
        if not url or not http_load.is_postgres_url(url):
            raise CommandError(
                "--http needs DATABASE_URL set to a PostgreSQL URL (e.g. "
                "postgres://postgres@127.0.0.1:5432/anchor): team mode runs on PostgreSQL, and "
                "the benchmark creates and drops a scratch database beside the one named."
            )
        plan = http_load.Plan.quick() if options["quick"] else http_load.Plan()
        try:
            clients = tuple(int(n) for n in options["clients"].split(",") if n.strip())
        except ValueError:
            clients = ()
        if not clients or min(clients) < 1:
            raise CommandError("--clients must be positive whole numbers, e.g. 1,5,10,25.")
        plan = replace(
            plan,
            clients=clients,
            profile=not options["no_profile"],
            profile_out=str(Path(out).resolve()) if (out := options["profile_out"]) else "",
        )
        if options["seconds"] is not None:
            if options["seconds"] <= 0:
                raise CommandError("--seconds must be more than 0.")
            plan = replace(plan, seconds=options["seconds"])
        if options["records"] is not None:
            if options["records"] < 1:
                raise CommandError("--records must be at least 1.")
            plan = replace(plan, records=options["records"])
        workers = os.environ.get("WEB_CONCURRENCY", "").strip() or "2"
        if not workers.isdigit() or int(workers) < 1:
            raise CommandError(f"WEB_CONCURRENCY={workers!r} is not a positive whole number.")
        plan = replace(plan, workers=int(workers))
        self.stdout.write(
            f"WEB_CONCURRENCY={plan.workers}; clients {', '.join(map(str, plan.clients))}; "
            f"{plan.seconds:g} s each; load average before: {http_load.load_average()}"
        )
        report = http_load.run(plan, progress=options["verbosity"] >= 1)
        for line in runner.table("postgresql, team mode over HTTP", report["rows"]):
            self.stdout.write(line)
        for line in report["lines"]:
            self.stdout.write(line)
        self.stdout.write(f"load average after: {http_load.load_average()}")
        if any(runner._verdict(r) == "ERROR" for r in report["rows"]):
            raise CommandError("the HTTP load benchmark failed; see the ERROR rows above.")

    def _say(self, options: dict[str, Any]):
        def say(message: str) -> None:
            if options["verbosity"] >= 1:
                sys.stderr.write(message + "\n")
                sys.stderr.flush()

        return say

    def _areas(self, only: str) -> list[str]:
        chosen = [a.strip() for a in only.split(",") if a.strip()] or list(runner.AREAS)
        unknown = sorted(set(chosen) - set(runner.AREAS))
        if unknown:
            raise CommandError(
                f"--only: {', '.join(unknown)} is not an area; use {', '.join(runner.AREAS)}."
            )
        return chosen

    def _sizes(self, options: dict[str, Any]) -> Sizes:
        sizes = Sizes.quick() if options["quick"] else Sizes()
        for name in ("records", "events", "names", "calls", "repeat"):
            value = options[name]
            if value is not None and value < 1:
                raise CommandError(f"--{name} must be at least 1.")
        if options["records"] is not None:
            sizes = replace(
                sizes,
                records=options["records"],
                meaning_records=min(100_000, options["records"]),
            )
        if options["events"] is not None:
            sizes = replace(sizes, events=options["events"])
        if options["no_profile"]:
            sizes = replace(sizes, profile=0)
        if options["names"] is not None:
            sizes = replace(
                sizes, names=options["names"], import_names=min(10_000, options["names"])
            )
        if options["calls"] is not None:
            sizes = replace(sizes, calls=options["calls"], writes=max(5, options["calls"] // 5))
        if options["repeat"] is not None:
            sizes = replace(
                sizes,
                repeat=options["repeat"],
                reference_repeat=min(3, options["repeat"]),
                startups=min(sizes.startups, options["repeat"]),
            )
        return sizes

    def _backends(self, choice: str) -> list[str]:
        has_postgres = bool(os.environ.get("DATABASE_URL", "").strip())
        if choice == "postgresql" and not has_postgres:
            raise CommandError("--backend postgresql needs DATABASE_URL set to a PostgreSQL URL.")
        if choice == "sqlite":
            return ["sqlite"]
        if choice == "postgresql":
            return ["postgresql"]
        return ["sqlite", "postgresql"] if has_postgres else ["sqlite"]
