"""A migrated SQLite file for each server a test starts, copied instead of migrated again; the
schemas a new database is made from.

Migrating a new file takes about three seconds of a server's first start, and well over a
hundred tests start a server on a file of their own. Each test process migrates one template
the first time a test asks, and every later test gets a copy of it made with SQLite's backup
API (a consistent copy whatever journal mode the template was left in).

Tests of the first start itself (a missing file is created and migrated, a bad path is named)
do not use this: they pass a path that does not exist yet, as a new install would.

`schema_sql` writes a migrated SQLite database as the SQL a new one is made from
(workflow/management/schema.sqlite.sql); `postgresql_schema_sql` records the SQL the migrations
send to a new PostgreSQL database (workflow/management/schema.postgresql.sql). After a migration
is added or a dependency upgraded, rewrite both with
`DATABASE_URL=postgres://... uv run python -m tests.migrated_schema`.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from functools import cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@cache
def _template() -> Path:
    """This process's migrated template, made on first use and kept until the process ends."""
    directory = Path(tempfile.mkdtemp(prefix="anchor-template-"))
    path = directory / "template.db"
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
        "ANCHOR_DB_PATH": str(path),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrating the template database failed:\n{done.stderr}")
    return path


def copy_sqlite(source_path: Path, target_path: Path) -> None:
    """Overwrite target with source through SQLite's backup API (consistent in any journal mode)."""
    source = sqlite3.connect(source_path)
    target = sqlite3.connect(target_path)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


def migrated_copy(path: Path) -> str:
    """A migrated, empty database at `path` (which must not exist yet); its path as a string."""
    copy_sqlite(_template(), path)
    return str(path)


def schema_sql(path: Path) -> str:
    """The SQL that remakes the database at `path`: its schema in the order it was made and its
    rows, leaving out the FTS5 tables' own tables (CREATE VIRTUAL TABLE makes them) and stamping
    migrations with the time of the load, so the text changes only with the schema."""
    with closing(sqlite3.connect(path)) as db:
        master = db.execute(
            "SELECT name, sql FROM sqlite_master "
            "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite%' ORDER BY rowid"
        ).fetchall()
        kinds = {name: kind for _schema, name, kind, *_ in db.execute("PRAGMA table_list")}
        # Rows come in the order they were written, some before a table they refer to was
        # remade: the loading connection checks no foreign keys until the end.
        lines = ["PRAGMA foreign_keys=OFF;", "BEGIN;"]
        for name, sql in master:
            if kinds.get(name) == "shadow":
                continue
            lines.append(f"{sql};")
            if kinds.get(name) != "table":
                continue
            columns = [column[1] for column in db.execute(f'PRAGMA table_info("{name}")')]
            values = " || ',' || ".join(
                "'CURRENT_TIMESTAMP'"
                if (name, column) == ("django_migrations", "applied")
                else f'quote("{column}")'
                for column in columns
            )
            select = f"SELECT 'INSERT INTO \"{name}\" VALUES(' || {values} || ');' FROM \"{name}\""
            lines += [row for (row,) in db.execute(f"{select} ORDER BY rowid")]
        lines += ["COMMIT;", "PRAGMA foreign_keys=ON;"]
    return "\n".join(lines) + "\n"


def postgresql_schema_sql(url: str) -> str:
    """What `migrate` sends to the new PostgreSQL database at `url` (which it migrates), as one
    script: every write with its values in place, unqualified names (the loading connection's
    schema), migrations stamped with the time of the load. Its reads are left out: the writes
    they led to are recorded. Plain statements any supported server loads, unlike pg_dump's
    output (settings and meta-commands of its own version, names bound to one schema)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.migrated_schema", "--record-postgresql"],
        cwd=REPO_ROOT,
        env={
            "PATH": os.environ.get("PATH", os.defpath),
            "DJANGO_SETTINGS_MODULE": "anchor_site.settings",
            "DATABASE_URL": url,
            "PYTHONHASHSEED": "0",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrating the PostgreSQL database failed:\n{done.stderr}")
    return done.stdout


def _record_postgresql_migrate() -> None:
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    statements = []

    def record(execute, sql, params, many, context):
        if not sql.lstrip().upper().startswith("SELECT"):
            assert not many, "executemany: record each row's statement"
            if sql.startswith('INSERT INTO "django_migrations"'):
                sql, params = sql.replace("%s)", "now())"), params[:2]
            sql_with_values = connection.ops.compose_sql(sql, params)  # type: ignore[attr-defined]
            statements.append(f"{sql_with_values.strip()};")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        call_command("migrate", interactive=False, verbosity=0)
    sys.stdout.write("\n".join(statements) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record-postgresql"]:
        _record_postgresql_migrate()
        sys.exit()
    (REPO_ROOT / "workflow" / "management" / "schema.sqlite.sql").write_text(
        schema_sql(_template())
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
    __import__("django").setup()
    from anchor_site.devtools.benchmarks.data import scratch_database

    with scratch_database(os.environ["DATABASE_URL"], "anchor_schema_sql") as url:
        schema = postgresql_schema_sql(url)
    (REPO_ROOT / "workflow" / "management" / "schema.postgresql.sql").write_text(schema)
