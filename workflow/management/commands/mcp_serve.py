"""Serve Anchor's MCP tools to one agent over stdio.

stdout carries JSON-RPC and nothing else; migrations, logs and warnings go to stderr. A new or
unmigrated database is migrated before the first request, so a fresh install needs no set-up.
The process exits with status 0 on end of input, SIGTERM or SIGINT.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from workflow.mcp.server import select_tools, serve_stdio_pipe
from workflow.mcp.stdio import (
    claim_stdio_for_protocol,
    exit_quietly_on_sigterm,
    resume_garbage_collection,
)

# Any constant works as long as every Anchor process uses the same one; "anchor" in ASCII.
POSTGRES_MIGRATION_LOCK = 0x616E63686F72


class Command(BaseCommand):
    help = (
        "Serve Anchor's MCP tools over stdio for one agent: JSON-RPC on stdout, logs on stderr. "
        "Creates and migrates the database on first start."
    )
    # Start-up time matters to the agent waiting on initialize; `manage.py check` runs these.
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--tools",
            help="Which tools to serve: 'core' (the everyday path, default), 'full' or a "
            "comma-separated list of tool names. Overrides ANCHOR_TOOLS.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        exit_quietly_on_sigterm()
        pipe = claim_stdio_for_protocol()  # already claimed when started through manage.py

        if options["tools"] is not None:
            try:
                select_tools(options["tools"])
            except ImproperlyConfigured as exc:
                raise CommandError(str(exc)) from exc
        migrate_if_needed(verbosity=options["verbosity"])
        connections.close_all()  # tool calls run in another thread with their own connection
        resume_garbage_collection()

        if options["verbosity"] >= 2:
            sys.stderr.write(f"anchor: ready in {time.monotonic() - started:.2f}s\n")
        anyio.run(serve_stdio_pipe, pipe)


def migrate_if_needed(*, verbosity: int) -> None:
    """Apply unapplied migrations; on an up-to-date database this costs one query."""
    try:
        if not _unapplied_migrations():
            return
        with _migration_lock():
            # Another process may have migrated while we waited for the lock.
            if _unapplied_migrations():
                _migrate(verbosity)
    except DatabaseError as exc:
        raise CommandError(_describe_database_failure(_reason(exc))) from exc


def _unapplied_migrations() -> list[Any]:
    """This process's plan, plus the migrations of apps a stdio server leaves out that the
    database has not recorded (a new install, or an upgraded package).

    When every migration file on disk is recorded as applied the plan is empty, which one query
    shows; only otherwise is the migration graph built (it imports every migration module).
    """
    applied = MigrationRecorder(connection).applied_migrations()
    left_out = _left_out_migrations() if settings.ANCHOR_STDIO_SERVER else []
    if all(key in applied for key in [*_installed_migrations(), *left_out]):
        return []
    executor = MigrationExecutor(connection)
    plan: list[Any] = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return plan + [key for key in left_out if key not in applied]


def _migration_files(label: str, folders: list[Path]) -> list[tuple[str, str]]:
    return [(label, path.stem) for folder in folders for path in folder.glob("[0-9]*.py")]


def _installed_migrations() -> list[tuple[str, str]]:
    """(label, name) of each installed app's migration files, found without importing them."""
    found = []
    for config in apps.get_app_configs():
        package, _explicit = MigrationLoader.migrations_module(config.label)
        spec = importlib.util.find_spec(package) if package else None
        if spec is not None and spec.submodule_search_locations:
            folders = [Path(folder) for folder in spec.submodule_search_locations]
            found += _migration_files(config.label, folders)
    return found


def _left_out_migrations() -> list[tuple[str, str]]:
    """Migration files of each app left out of this process, found on disk without importing
    the app (importing django-mcp-server is what leaving it out saves)."""
    found = []
    for module in settings.ANCHOR_APPS_LEFT_OUT_OF_STDIO:
        spec = importlib.util.find_spec(module)  # found, not imported (its parents are)
        if spec is not None and spec.submodule_search_locations:
            folders = [Path(folder) / "migrations" for folder in spec.submodule_search_locations]
            # Each one's label is its module's last part (django.contrib.admin: "admin").
            found += _migration_files(module.rpartition(".")[2], folders)
    return found


def _migrate(verbosity: int) -> None:
    if not settings.ANCHOR_STDIO_SERVER:
        call_command("migrate", interactive=False, verbosity=verbosity, stdout=sys.stderr)
        return
    # This process leaves out apps a stdio server never uses (anchor_site.settings), but their
    # tables belong in the database all the same: the admin and team mode read them. So
    # `migrate` runs with every app, in a process that is not a stdio server. Its output goes
    # to our stderr (fd 1 already points there); its last error line explains a failure.
    done = subprocess.run(
        [
            sys.executable,
            str(Path(settings.BASE_DIR) / "manage.py"),
            "migrate",
            "--no-input",
            f"--verbosity={verbosity}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise CommandError(_describe_database_failure(lines[-1] if lines else "migrate failed"))


@contextlib.contextmanager
def _migration_lock() -> Iterator[None]:
    """Several servers starting at once on a new database must not migrate it twice."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [POSTGRES_MIGRATION_LOCK])
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [POSTGRES_MIGRATION_LOCK])
        return
    # SQLite: an advisory lock on a file in the temp directory, keyed by the database path, so
    # nothing extra appears beside the user's database.
    database = Path(connection.settings_dict["NAME"]).resolve()
    key = hashlib.sha256(str(database).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"anchor-migrate-{key}.lock"
    with open(lock_path, "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def _reason(exc: DatabaseError) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _describe_database_failure(reason: str) -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"ANCHOR_DB_PATH: cannot open or migrate the SQLite database {db['NAME']}: {reason}"
    # Name the server, never the password that DATABASE_URL may carry.
    where = f"{db.get('NAME')!r} on {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    return f"DATABASE_URL: cannot open or migrate the PostgreSQL database {where}: {reason}"
