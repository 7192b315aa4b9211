"""Benchmark Anchor where an agent waits: resolution, imports, stdio round trips, start-up,
guarded writes, search at scale, traversal and aggregation at scale, tool list size, memory and
batches.

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

from anchor_site.devtools.benchmarks import runner
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
                "100,000); the graph rows use a ledger of this many, at most 100,000."
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
            "--repeat", type=int, help="Timed repetitions of in-process calls (default 20)."
        )
        parser.add_argument(
            "--backend",
            choices=("all", "sqlite", "postgresql"),
            default="all",
            help="all: SQLite, plus PostgreSQL when DATABASE_URL is set.",
        )
        # The command re-runs itself as a worker per backend, against that run's database.
        parser.add_argument("--worker", help=argparse.SUPPRESS)
        parser.add_argument("--sizes", help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
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
        for name in ("records", "names", "calls", "repeat"):
            value = options[name]
            if value is not None and value < 1:
                raise CommandError(f"--{name} must be at least 1.")
        if options["records"] is not None:
            sizes = replace(sizes, records=options["records"])
        if options["names"] is not None:
            sizes = replace(
                sizes, names=options["names"], import_names=min(10_000, options["names"])
            )
        if options["calls"] is not None:
            sizes = replace(sizes, calls=options["calls"], writes=max(5, options["calls"] // 5))
        if options["repeat"] is not None:
            sizes = replace(
                sizes, repeat=options["repeat"], reference_repeat=min(3, options["repeat"])
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
