"""What a stdio server loads: only what stdio and the configured backend need.

The stdio mcp_serve serves the SDK's own FastMCP rather than django-mcp-server's (which
imports Django REST framework and, through it, psycopg) and leaves the admin app out; what it
serves must not change for that. Each check runs a real server process.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.e2e.server import REPO_ROOT, base_env, call_raw, initialize_raw, send
from tests.migrated_schema import migrated_copy
from workflow.management.commands import mcp_serve

# Every server here runs on a SQLite file of its own, whatever the backend of this run.
pytestmark = pytest.mark.sqlite

SNAPSHOT = REPO_ROOT / "tests" / "mcp" / "tool_list.json"
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", re.MULTILINE)
# Packages a SQLite stdio server has no use for: the HTTP stack, the PostgreSQL driver.
HTTP_ONLY = (
    "rest_framework",
    "mcp_server",
    "psycopg",
    "psycopg_binary",
    "psycopg_pool",
    "oauth2_provider",
    "oauthlib",
)
# Loaded on the first search by meaning or the first record written, never to start.
FIRST_USE = ("numpy", "onnxruntime", "tokenizers", "records.meaning.index")


@pytest.fixture(scope="module")
def served_session(tmp_path_factory) -> tuple[set[str], list[dict]]:
    """One served session read by the two tests below: each asks only what it loaded or
    listed, so a second server start (and first-start migration) would add only its cost."""
    return modules_loaded_by_a_served_session(tmp_path_factory.mktemp("served"))


def modules_loaded_by_a_served_session(tmp_path: Path) -> tuple[set[str], list[dict]]:
    """Every module a stdio server imports over a whole session (initialize, tools/list, a
    tool call, end of input), read from `python -X importtime`, and the tools it listed."""
    env = base_env(ANCHOR_DB_PATH=str(tmp_path / "a.db"), ANCHOR_LOG_LEVEL="WARNING")
    log = tmp_path / "stderr.log"
    with open(log, "w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-X", "importtime", "manage.py", "mcp_serve"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        try:
            initialize_raw(process)
            send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            tools = read_result(process, 2)["tools"]
            assert call_raw(process, 3, "list_collections", {})["structuredContent"]["ok"]
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(timeout=30) == 0
        finally:
            process.kill()
    return set(IMPORTED.findall(log.read_text())), tools


def read_result(process: subprocess.Popen, request_id: int) -> dict:
    assert process.stdout is not None
    while True:
        message = json.loads(process.stdout.readline())
        if message.get("id") == request_id:
            return message["result"]


def test_a_sqlite_stdio_server_imports_no_http_stack_psycopg_or_admin_modules(served_session):
    modules, _ = served_session
    assert "workflow.mcp.server" in modules  # the profile is read: the server did import
    loaded = sorted(m for m in modules if m.split(".")[0] in HTTP_ONLY)
    assert loaded == [], loaded
    admin_modules = sorted(
        m
        for m in modules
        if m.startswith(
            ("records.admin", "workflow.admin", "django.contrib.admin", "anchor_site.oauth")
        )
    )
    assert admin_modules == [], admin_modules
    model_modules = sorted(m for m in modules if m.startswith(FIRST_USE))
    assert model_modules == [], model_modules


def test_the_stdio_server_lists_exactly_the_snapshot_tool_list(served_session):
    """The SDK's FastMCP serves the very tool list django-mcp-server's server does."""
    _, tools = served_session
    assert sorted(tools, key=lambda tool: tool["name"]) == json.loads(SNAPSHOT.read_text())


def test_other_commands_still_load_django_mcp_server_and_the_admin(tmp_path):
    """Only the stdio server leaves them out: HTTP, the admin and every other command keep the
    whole app list (the /mcp view is django-mcp-server's, the admin autodiscovers)."""
    probe = (
        "import sys; from django.contrib import admin; from records.models import Workspace; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp_server', 'rest_framework'}),"
        " admin.site.is_registered(Workspace))"
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", probe],
        cwd=REPO_ROOT,
        env=base_env(ANCHOR_DB_PATH=str(tmp_path / "a.db")),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "['mcp_server', 'rest_framework'] True", (
        done.stdout
    )


def run_manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=base_env(ANCHOR_DB_PATH=str(tmp_path / "a.db"), **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done


def unapplied(tmp_path: Path) -> list[str]:
    """Every app's unapplied migrations, as a process with the whole app list sees them."""
    plan = run_manage(tmp_path, "showmigrations", "--plan").stdout.splitlines()
    return [line for line in plan if line.startswith("[ ]")]


def test_a_new_database_gets_every_apps_tables_from_a_stdio_server(tmp_path):
    """The OAuth provider and the admin are left out of the stdio process, not out of the
    database: the admin and team mode on the same file need their tables. A new file is made
    from the schema, with nothing left to migrate (stdout left to JSON-RPC)."""
    # Input already closed: prepare the database, serve nothing, exit.
    done = run_manage(tmp_path, "mcp_serve")
    assert (done.stdout, "Applying" in done.stderr) == ("", False), done.stderr
    assert unapplied(tmp_path) == []


def test_a_new_database_gets_the_migrations_the_schema_lacks(tmp_path, monkeypatch):
    """A schema behind the migrations (a migration added since it was written) still makes a
    new file; this process's apps' missing migrations are then applied in-process."""
    schema = tmp_path / "schema.sqlite.sql"
    # As if sessions were newly installed: neither its table nor its migration in the schema.
    lines = (mcp_serve.SCHEMAS / "schema.sqlite.sql").read_text().splitlines()
    schema.write_text("\n".join(line for line in lines if "session" not in line.lower()))
    runner = (
        "import django, runpy, sys\n"
        "django.setup()\n"
        "from workflow.management.commands import mcp_serve\n"
        f"mcp_serve.SCHEMAS = __import__('pathlib').Path({str(tmp_path)!r})\n"
        "sys.argv = ['manage.py', 'mcp_serve']\n"
        "runpy.run_path('manage.py', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", runner],
        cwd=REPO_ROOT,
        env=base_env(
            ANCHOR_DB_PATH=str(tmp_path / "a.db"),
            DJANGO_SETTINGS_MODULE="anchor_site.settings_stdio",
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Applying sessions.0001_initial... OK" in done.stderr, done.stderr
    assert unapplied(tmp_path) == []


def test_an_existing_database_is_not_replaced_by_the_schema(tmp_path):
    """Only a new database (no tables yet) is made from the schema: an existing one keeps its
    rows, and gets only the migrations it lacks, in-process."""
    database = Path(migrated_copy(tmp_path / "a.db"))
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("DROP TABLE django_session")  # as if sessions were newly installed
        db.execute("DELETE FROM django_migrations WHERE app = 'sessions'")
        db.execute(
            "INSERT INTO records_workspace (id, created_at, feed_key) "
            "VALUES ('kept', '2026-01-01 00:00:00', 'k')"
        )
    done = run_manage(tmp_path, "mcp_serve")
    assert done.stdout == ""
    assert "Applying sessions.0001_initial... OK" in done.stderr, done.stderr
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT id FROM records_workspace").fetchall() == [("kept",)]


# Run manage.py as a client starts it, reporting at exit which settings module it loaded.
SETTINGS_PROBE = (
    "import atexit, runpy, sys\n"
    "from django.conf import settings\n"
    "atexit.register(lambda: sys.stderr.write(f'settings={settings.SETTINGS_MODULE}\\n'))\n"
    "sys.argv = ['manage.py', 'mcp_serve']\n"
    "runpy.run_path('manage.py', run_name='__main__')\n"
)


@pytest.mark.parametrize(
    ("chosen", "loaded"),
    [(None, "anchor_site.settings_stdio"), ("anchor_site.settings", "anchor_site.settings")],
)
def test_mcp_serve_picks_the_stdio_settings_unless_told_otherwise(tmp_path, chosen, loaded):
    env = base_env(ANCHOR_DB_PATH=migrated_copy(tmp_path / "a.db"))
    if chosen:
        env["DJANGO_SETTINGS_MODULE"] = chosen
    done = subprocess.run(
        [sys.executable, "-c", SETTINGS_PROBE],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"settings={loaded}\n" in done.stderr, done.stderr


# Run manage.py as a client starts it, reporting at exit whether the cyclic garbage collector
# is on and whether start-up's objects were frozen (done only when start-up had paused it).
GC_PROBE = (
    "import atexit, gc, runpy, sys\n"
    "atexit.register(lambda: sys.stderr.write("
    "f'GC enabled={gc.isenabled()} frozen={gc.get_freeze_count() > 0}\\n'))\n"
    "sys.argv = ['manage.py', 'mcp_serve']\n"
    "runpy.run_path('manage.py', run_name='__main__')\n"
)


def test_garbage_collection_is_paused_during_start_and_back_on_while_serving(tmp_path):
    """Start-up pauses the cyclic collector (15 % of its time went to it) and serving turns
    it back on: a long session must still free reference cycles."""
    env = base_env(ANCHOR_DB_PATH=migrated_copy(tmp_path / "a.db"), ANCHOR_LOG_LEVEL="WARNING")
    process = subprocess.Popen(
        [sys.executable, "-c", GC_PROBE],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        initialize_raw(process)
        assert call_raw(process, 2, "list_collections", {})["structuredContent"]["ok"]
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        errors = process.stderr.read().decode()
    finally:
        process.kill()
    assert "GC enabled=True frozen=True" in errors, errors
