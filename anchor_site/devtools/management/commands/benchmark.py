"""`manage.py benchmark`: timed rows for every area an agent waits on, each beside a reference
measured in the same run (a slower design, a floor, or the same server doing less), so ratios
hold on a noisy machine. Data goes to a temporary SQLite file and, when DATABASE_URL is set, a
scratch PostgreSQL database the run creates and drops: never the configured database."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from anchor_site.devtools.benchmarks import http_load, runner
from anchor_site.devtools.benchmarks.measure import Row, Sizes, table, verdict

OPTIONS = (
    ("--records", "Records in the workspace for the search rows (default 1,000,000; quick "
     "100,000); the graph and meaning rows use at most 100,000, the locks and agendas rows a "
     "store of this many restored from an export, at most 50,000. With --http: seeded records "
     "(default 5,000; quick 2,000)."),
    ("--events", "Audit events in the workspace the round-trip rows run on (default 1,000,000; "
     "quick 100,000)."),
    ("--names", "Names in the scope resolve_record scans (default 100,000; quick 20,000)."),
    ("--calls", "stdio round trips per tool (default 1,000; quick 200); writes are a fifth."),
    ("--repeat", "Timed repetitions of in-process calls (default 20), and at most as many "
     "server starts (default 5)."),
)  # fmt: skip


SIZE_OPTIONS = [option.removeprefix("--") for option, _ in OPTIONS]


class Command(BaseCommand):
    help = (
        "Generate data and time every area an agent waits on, on SQLite and (when DATABASE_URL "
        "is set) PostgreSQL; prints medians, targets, same-run references and PASS/MISS. The "
        "full run takes up to ~25 minutes; --quick about two."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--quick", action="store_true", help="Smaller data, fewer calls.")
        parser.add_argument(
            "--only",
            default="",
            help=f"Areas to run: {', '.join(runner.AREAS)} (peer only when named).",
        )
        for option, help in OPTIONS:
            parser.add_argument(option, type=int, help=help)
        parser.add_argument("--backend", choices=("all", "sqlite", "postgresql"), default="all")
        parser.add_argument(
            "--http",
            action="store_true",
            help="Team-mode load instead: gunicorn on a scratch PostgreSQL database beside "
            "DATABASE_URL's, N concurrent clients over streamable HTTP.",
        )
        parser.add_argument("--clients", default=",".join(map(str, http_load.CLIENTS)))
        parser.add_argument("--seconds", type=float, help="With --http: wall time per N.")
        parser.add_argument(
            "--no-profile", action="store_true", help="Skip the py-spy re-run of a missed phase."
        )
        parser.add_argument("--profile-out", default="", help="With --http: keep py-spy's stacks.")
        # The command re-runs itself as a worker on the run's own database.
        parser.add_argument("--worker", help=argparse.SUPPRESS)
        parser.add_argument("--plan", help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["worker"]:
            self._work(Path(options["worker"]), json.loads(options["plan"]), options)
            return
        if options["http"]:
            self._http(options)
            return
        areas = self._areas(options["only"])
        sizes = self._sizes(options)
        failed = False
        for vendor in self._backends(options["backend"]):
            rows = runner.run_backend(vendor, sizes, areas, progress=options["verbosity"] >= 1)
            self.stdout.write("\n".join([*table(vendor, rows), ""]))
            failed = failed or any(verdict(r) == "ERROR" for r in rows)
        if failed:
            raise CommandError("some benchmark areas failed; see the ERROR rows above.")

    def _work(self, out: Path, plan: dict[str, Any], options: dict[str, Any]) -> None:
        def say(message: str) -> None:
            if options["verbosity"] >= 1:
                print(message, file=sys.stderr, flush=True)

        def save(rows: list[Row], lines: Sequence[str] = ()) -> None:
            report = {"rows": [r.as_dict() for r in rows], "lines": list(lines)}
            out.write_text(json.dumps(report))

        if options["http"]:
            http_load.work(
                replace(http_load.Plan(**plan), clients=tuple(plan["clients"])), say, save
            )
        else:
            runner.work(Sizes(**plan), self._areas(options["only"]), save, say)

    def _http(self, options: dict[str, Any]) -> None:
        url = os.environ.get("DATABASE_URL", "").strip()
        if not url:
            raise CommandError("--http needs DATABASE_URL set to a PostgreSQL URL.")
        if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
            raise CommandError(
                "--http runs on PostgreSQL (team mode): set DATABASE_URL to a PostgreSQL URL; "
                "the benchmark creates and drops a scratch database beside the one named."
            )
        clients = [n.strip() for n in options["clients"].split(",") if n.strip()]
        if not clients or not all(n.isdigit() and int(n) > 0 for n in clients):
            raise CommandError("--clients must be positive whole numbers, e.g. 1,5,10,25.")
        workers = os.environ.get("WEB_CONCURRENCY", "").strip() or "2"
        if not workers.isdigit() or int(workers) < 1:
            raise CommandError(f"WEB_CONCURRENCY={workers!r} is not a positive whole number.")
        if (options["seconds"] or 1) <= 0 or (options["records"] or 1) < 1:
            raise CommandError("--seconds and --records must be more than 0.")
        plan = http_load.Plan.quick() if options["quick"] else http_load.Plan()
        plan = replace(
            plan,
            clients=tuple(map(int, clients)),
            workers=int(workers),
            profile=not options["no_profile"],
            profile_out=str(Path(out).resolve()) if (out := options["profile_out"]) else "",
            seconds=options["seconds"] or plan.seconds,
            records=options["records"] or plan.records,
        )
        self.stdout.write(
            f"WEB_CONCURRENCY={plan.workers}; clients {', '.join(map(str, plan.clients))}; "
            f"{plan.seconds:g} s each; load average before: {http_load.load_average()}"
        )
        args = ["--http", "--plan", json.dumps(plan.__dict__)]
        report = runner.in_worker("postgresql", args, progress=options["verbosity"] >= 1)
        self.stdout.write("\n".join(table("postgresql, team mode over HTTP", report["rows"])))
        self.stdout.write(
            "\n".join([*report["lines"], f"load average after: {http_load.load_average()}"])
        )
        if any(verdict(r) == "ERROR" for r in report["rows"]):
            raise CommandError("the HTTP load benchmark failed; see the ERROR rows above.")

    def _areas(self, only: str) -> list[str]:
        chosen = [a.strip() for a in only.split(",") if a.strip()]
        chosen = chosen or [a for a in runner.AREAS if a not in runner.OPT_IN]
        if unknown := sorted(set(chosen) - set(runner.AREAS)):
            raise CommandError(
                f"--only: {', '.join(unknown)} is not an area; use {', '.join(runner.AREAS)}."
            )
        return chosen

    def _sizes(self, options: dict[str, Any]) -> Sizes:
        sizes = Sizes.quick() if options["quick"] else Sizes()
        given = {name: options[name] for name in SIZE_OPTIONS if options[name] is not None}
        if bad := [name for name, value in given.items() if value < 1]:
            raise CommandError(f"--{bad[0]} must be at least 1.")
        sizes = replace(sizes, **given)
        # What an option bounds beside its own size.
        derived = {
            "records": {"meaning_records": min(100_000, sizes.records)},
            "names": {"import_names": min(10_000, sizes.names)},
            "calls": {"writes": max(5, sizes.calls // 5)},
            "repeat": {
                "reference_repeat": min(3, sizes.repeat),
                "startups": min(sizes.startups, sizes.repeat),
            },
        }
        for name in given:
            sizes = replace(sizes, **derived.get(name, {}))
        return replace(sizes, profile=0) if options["no_profile"] else sizes

    def _backends(self, choice: str) -> list[str]:
        postgres = bool(os.environ.get("DATABASE_URL", "").strip())
        if choice == "postgresql" and not postgres:
            raise CommandError("--backend postgresql needs DATABASE_URL set to a PostgreSQL URL.")
        return [choice] if choice != "all" else ["sqlite", "postgresql"] if postgres else ["sqlite"]
