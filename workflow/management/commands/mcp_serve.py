"""Serve Anchor's MCP tools to one agent over stdio.

stdout carries JSON-RPC and nothing else; migrations, logs and warnings go to stderr. A new or
unmigrated database is migrated before the first request, so a fresh install needs no set-up.
The process exits with status 0 on end of input, SIGTERM or SIGINT.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection, connections
from django.db.migrations.executor import MigrationExecutor

from workflow.mcp.server import select_tools, serve_stdio_pipe
from workflow.mcp.stdio import claim_stdio_for_protocol, exit_quietly_on_sigterm

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
            help="Which tools to serve: 'full', 'core' (the everyday path) or a comma-separated "
            "list of tool names. Overrides ANCHOR_TOOLS.",
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
                call_command("migrate", interactive=False, verbosity=verbosity, stdout=sys.stderr)
    except DatabaseError as exc:
        raise CommandError(_describe_database_failure(exc)) from exc


def _unapplied_migrations() -> list[Any]:
    executor = MigrationExecutor(connection)
    return executor.migration_plan(executor.loader.graph.leaf_nodes())


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


def _describe_database_failure(exc: DatabaseError) -> str:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"ANCHOR_DB_PATH: cannot open or migrate the SQLite database {db['NAME']}: {reason}"
    # Name the server, never the password that DATABASE_URL may carry.
    where = f"{db.get('NAME')!r} on {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    return f"DATABASE_URL: cannot open or migrate the PostgreSQL database {where}: {reason}"
