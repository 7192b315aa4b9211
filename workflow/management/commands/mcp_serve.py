"""Serve Anchor's MCP tools to one agent over stdio.

stdout carries JSON-RPC only; migrations, logs and warnings go to stderr. It exits with status 0
on end of input, SIGTERM or SIGINT. A new database (no tables yet) is made from
workflow/management/schema.<vendor>.sql, every app's migrated schema (the HTTP, OAuth and admin
apps this process leaves out too, so the database can serve team mode); a test keeps each equal
to the migrations. Whatever this process's apps still lack is then migrated in-process.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import pkgutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

import anyio
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from workflow.mcp.server import select_tools
from workflow.mcp.stdio import claim_stdio_for_protocol, exit_quietly_on_sigterm, serve_stdio

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
        prepare_database(verbosity=options["verbosity"])
        connections.close_all()  # tool calls run in another thread with their own connection
        if not gc.isenabled():
            # manage.py paused the cyclic collector for the start; what the start made lives as
            # long as the process, so it is frozen out of every later collection.
            gc.freeze()
            gc.enable()

        if options["verbosity"] >= 2:
            sys.stderr.write(f"anchor: ready in {time.monotonic() - started:.2f}s\n")
        anyio.run(serve_stdio, pipe)


SCHEMAS = Path(__file__).resolve().parents[1]  # schema.sqlite.sql and schema.postgresql.sql


def prepare_database(*, verbosity: int) -> None:
    """Make a new database from its schema, then apply unrecorded migrations; on an up-to-date
    database this costs one query."""
    try:
        if _all_recorded():
            return
        with _migration_lock():
            # Another process may have made or migrated it while we waited for the lock.
            if not connection.introspection.table_names():
                script = (SCHEMAS / f"schema.{connection.vendor}.sql").read_text()
                # One transaction, all or nothing: on SQLite the script says BEGIN and COMMIT;
                # on PostgreSQL one multi-statement query runs as one implicit transaction.
                with connection.cursor() as cursor:
                    if connection.vendor == "sqlite":
                        cursor.cursor.executescript(script)
                    else:
                        cursor.execute(script)
            if not _all_recorded():
                call_command("migrate", interactive=False, verbosity=verbosity, stdout=sys.stderr)
    except (DatabaseError, sqlite3.Error) as exc:
        raise CommandError(_describe_database_failure(exc)) from exc


def _all_recorded() -> bool:
    """Whether every migration file is recorded as applied, without building the graph."""
    applied = MigrationRecorder(connection).applied_migrations()
    return all(key in applied for key in _installed_migrations())


def _installed_migrations() -> list[tuple[str, str]]:
    """(label, name) of each installed app's migrations, without importing them."""
    found = []
    for config in apps.get_app_configs():
        package, _explicit = MigrationLoader.migrations_module(config.label)
        try:
            module = import_module(package) if package else None
        except ModuleNotFoundError:
            continue
        for _finder, name, is_package in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not is_package and name[0] not in "_~":
                found.append((config.label, name))
    return found


@contextlib.contextmanager
def _migration_lock() -> Iterator[None]:
    """Several servers starting at once on a new database must not migrate it twice."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [POSTGRES_MIGRATION_LOCK])
        try:
            yield
        finally:
            # A cursor of its own: migrate may have closed the one that took the lock.
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [POSTGRES_MIGRATION_LOCK])
        return
    # SQLite: a lock file in the temp directory, keyed by the database path.
    database = Path(connection.settings_dict["NAME"]).resolve()
    key = hashlib.sha256(str(database).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"anchor-migrate-{key}.lock"
    with open(lock_path, "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def _describe_database_failure(exc: Exception) -> str:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"ANCHOR_DB_PATH: cannot open or migrate the SQLite database {db['NAME']}: {reason}"
    # Name the server, never the password that DATABASE_URL may carry.
    where = f"{db.get('NAME')!r} on {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    return f"DATABASE_URL: cannot open or migrate the PostgreSQL database {where}: {reason}"
