"""mcp_serve as a client sees it: a subprocess on stdio, started and stopped for real."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from django.db import connection

from anchor_site.devtools.benchmarks.data import scratch_database
from tests.e2e.server import (
    REPO_ROOT,
    SERVE,
    base_env,
    call_ok,
    call_raw,
    envelope,
    initialize_raw,
    mcp_session,
    postgres_url,
    seed,
    start_raw,
)
from tests.liveness import PROMPT_EXIT_S
from tests.migrated_schema import migrated_copy
from workflow.mcp.instructions import SERVER_INSTRUCTIONS

pytestmark = pytest.mark.slow

READ_TOOLS = {
    "list_collections",
    "get_record_context",
    "get_record_history",
    "get_collection_history",
    "search_records",
}


def test_initialize_carries_the_instructions_and_tools_have_described_schemas(
    server_database, server_log
):
    async def scenario():
        async with mcp_session(base_env(**server_database), server_log) as (session, init):
            tools = (await session.list_tools()).tools
            return init, {tool.name: tool for tool in tools}

    init, tools = anyio.run(scenario)

    assert init.instructions == SERVER_INSTRUCTIONS
    assert init.serverInfo.name == "anchor"
    missing = READ_TOOLS - tools.keys()
    assert not missing, f"read tools missing from tools/list: {sorted(missing)}"
    for name, tool in tools.items():
        assert tool.description, f"{name} has no description"
        assert tool.inputSchema.get("type") == "object", f"{name} has no input schema"
        for param, schema in tool.inputSchema.get("properties", {}).items():
            assert schema.get("description"), f"{name}.{param} has no description in its schema"
    context_params = tools["get_record_context"].inputSchema["properties"]
    assert {"record_id", "relationship_limit", "event_limit"} <= context_params.keys()


def test_tools_option_serves_the_core_profile(server_database, server_log):
    async def tool_names(*options: str) -> set[str]:
        async with mcp_session(base_env(**server_database), server_log, *options) as (session, _):
            return {tool.name for tool in (await session.list_tools()).tools}

    full, core = anyio.run(tool_names), anyio.run(tool_names, "--tools", "core")
    assert {"resolve_record", "prepare_write", "commit_write"} <= core < full
    assert anyio.run(tool_names, "--tools", "list_collections,search_records") == {
        "list_collections",
        "search_records",
    }


@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
def test_unknown_tools_option_fails_with_one_line(tmp_path):
    done = subprocess.run(
        [*SERVE, "--tools", "everything"],
        cwd=REPO_ROOT,
        env=base_env(ANCHOR_DB_PATH=str(tmp_path / "a.db")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--tools" in lines[0] and "everything" in lines[0], done.stderr


def test_seeded_data_reads_back_through_the_tools_and_survives_a_restart(
    server_database, server_log
):
    env = base_env(**server_database)
    ids = seed(env)

    async def read_back():
        async with mcp_session(env, server_log) as (session, _):
            catalog = await call_ok(session, "list_collections", {})
            context = await call_ok(session, "get_record_context", {"record_id": ids["kirat"]})
            found = await call_ok(
                session, "search_records", {"query": "kir", "collection_id": ids["people"]}
            )
            return catalog, context, found

    for attempt in ("first start", "after a restart"):
        catalog, context, found = anyio.run(read_back)
        names = {c["name"]: c["collection_id"] for c in catalog["collections"]}
        assert names.get("people") == ids["people"], f"{attempt}: catalog is {catalog}"
        assert names.get("openings") == ids["openings"], f"{attempt}: catalog is {catalog}"
        assert context["record"]["title"] == "Kirat", f"{attempt}: context is {context}"
        assert context["record"]["data"] == {"email": "kirat@example.com"}
        assert ids["backend"] in json.dumps(context), f"{attempt}: link to the opening missing"
        assert [r["record_id"] for r in found["records"]] == [ids["kirat"]], found


def test_another_workspace_sees_nothing_of_this_one(server_database, server_log):
    """Scope comes from ANCHOR_WORKSPACE_ID alone; the same file serves two partitions."""
    ids = seed(base_env(**server_database))
    elsewhere = base_env(ANCHOR_WORKSPACE_ID="elsewhere", **server_database)

    async def look():
        async with mcp_session(elsewhere, server_log) as (session, _):
            catalog = await call_ok(session, "list_collections", {})
            context = envelope(
                await session.call_tool("get_record_context", {"record_id": ids["kirat"]})
            )
            found = await call_ok(session, "search_records", {"query": "Kirat"})
            return catalog, context, found

    catalog, context, found = anyio.run(look)
    assert catalog["collections"] == []
    assert context["ok"] is False and context["error"]["code"] == "NOT_FOUND", context
    assert found["records"] == []


@pytest.mark.sqlite  # the embedded default; PostgreSQL is below
def test_a_new_sqlite_database_is_created_and_migrated_on_first_start(tmp_path, server_log):
    db_path = tmp_path / "fresh" / "anchor.db"
    db_path.parent.mkdir()
    env = base_env(ANCHOR_DB_PATH=str(db_path))

    async def scenario():
        async with mcp_session(env, server_log) as (session, _):
            return await call_ok(session, "list_collections", {})

    catalog = anyio.run(scenario)

    assert catalog["collections"] == []
    assert_fully_migrated(sqlite3.connect(db_path))
    with sqlite3.connect(db_path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_new_postgres_database_is_made_from_the_schema_on_first_start(server_log):
    """Every app's tables, the admin's and team mode's too, with nothing left to migrate."""
    name = f"anchor_e2e_fresh_{os.getpid()}"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        env = base_env(DATABASE_URL=postgres_url({**connection.settings_dict, "NAME": name}))

        async def scenario():
            async with mcp_session(env, server_log) as (session, _):
                return await call_ok(session, "list_collections", {})

        assert anyio.run(scenario)["collections"] == []
        assert "Applying" not in Path(server_log.name).read_text()
        done = subprocess.run(
            [sys.executable, "manage.py", "showmigrations", "--plan"],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "[ ]" not in done.stdout and "[X]  workflow.0001_initial" in done.stdout, done.stdout
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_servers_starting_together_on_a_new_postgres_database_make_it_once(server_log):
    """The second waits for the first's lock, then finds the tables made: no second load."""
    name = f"{connection.settings_dict['NAME']}_together"
    with scratch_database(postgres_url(connection.settings_dict), name) as url:
        servers = [start_raw(base_env(DATABASE_URL=url), stderr=server_log) for _ in range(2)]
        try:
            for server in servers:
                initialize_raw(server)
                assert call_raw(server, 2, "list_collections", {})["structuredContent"]["ok"]
        finally:
            for server in servers:
                server.kill()
                server.wait()


def assert_fully_migrated(db: sqlite3.Connection) -> None:
    applied = {(app, name) for app, name in db.execute("SELECT app, name FROM django_migrations")}
    db.close()
    for app in ("records", "workflow"):
        on_disk = {(app, path.stem) for path in (REPO_ROOT / app / "migrations").glob("[0-9]*.py")}
        assert on_disk <= applied, f"not applied: {sorted(on_disk - applied)}"


@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
def test_stray_stdout_writes_never_reach_the_protocol_stream(tmp_path):
    """A settings module, an app's ready() and a tool all write to stdout in every usual way."""
    log_path = tmp_path / "stderr.log"
    env = base_env(
        DJANGO_SETTINGS_MODULE="tests.e2e.noisy.settings", ANCHOR_DB_PATH=str(tmp_path / "a.db")
    )
    with open(log_path, "w") as log:
        process = start_raw(env, stderr=log)
        try:
            # read_reply parses every stdout line as JSON-RPC, so one stray line fails here.
            assert initialize_raw(process)["instructions"] == SERVER_INSTRUCTIONS
            stray = call_raw(process, 2, "emit_stray_output", {})
            catalog = call_raw(process, 3, "list_collections", {})
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(timeout=10) == 0
        finally:
            process.kill()
    assert stray.get("structuredContent", {}).get("ok") is True, stray
    assert catalog.get("structuredContent", {}).get("ok") is True, catalog
    logged = log_path.read_text()
    for marker in (
        "STRAY-SETTINGS",
        "STRAY-READY",
        "STRAY-PRINT",
        "STRAY-DUNDER",
        "STRAY-FD1",
        "STRAY-LOG",
    ):
        assert marker in logged, f"{marker} did not arrive on stderr:\n{logged}"


@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
@pytest.mark.parametrize("stop", ["end of input", "SIGTERM"])
def test_exits_cleanly_and_promptly(stop, tmp_path):
    # A migrated copy: the first start's migration is the stray-output test's (a new file).
    process = start_raw(base_env(ANCHOR_DB_PATH=migrated_copy(tmp_path / "a.db")))
    try:
        initialize_raw(process)
        call_raw(process, 2, "list_collections", {})
        started = time.monotonic()
        if stop == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:
            assert process.stdin is not None
            process.stdin.close()
        status = process.wait(timeout=10)
        elapsed = time.monotonic() - started
    finally:
        process.kill()
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert status == 0, f"exit status {status} after {stop}:\n{stderr}"
    assert elapsed < PROMPT_EXIT_S, f"took {elapsed:.2f}s to exit after {stop}"
    assert "Traceback" not in stderr, stderr


def test_connections_stay_fresh_across_calls(server_database):
    """A long-lived server sees other processes' writes, survives a dropped connection and
    holds at most one connection (the tool thread's; start-up's is closed)."""
    env = base_env(**server_database)
    process = start_raw(env, stderr=subprocess.DEVNULL)
    try:
        initialize_raw(process)
        assert tool_result(call_raw(process, 2, "list_collections", {}))["collections"] == []
        ids = seed(env)  # another process writes while the server is idle
        names = {
            c["name"]
            for c in tool_result(call_raw(process, 3, "list_collections", {}))["collections"]
        }
        assert {"people", "openings"} <= names, "the server read a stale snapshot"
        if connection.vendor == "postgresql":
            assert postgres_connections_besides_mine() <= 1
            drop_other_postgres_connections()
        else:
            assert len(open_files(process.pid, server_database["ANCHOR_DB_PATH"])) <= 1
        context = tool_result(
            call_raw(process, 4, "get_record_context", {"record_id": ids["kirat"]})
        )
        assert context["record"]["title"] == "Kirat"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


def tool_result(reply: dict) -> dict:
    envelope = reply.get("structuredContent")
    assert envelope is not None and envelope.get("ok"), f"tool call failed: {reply}"
    return envelope["result"]


def drop_other_postgres_connections() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def postgres_connections_besides_mine() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def open_files(pid: int, db_path: str) -> list[str]:
    fd_dir = Path(f"/proc/{pid}/fd")
    if not fd_dir.is_dir():
        pytest.skip("needs /proc to inspect the server's open files")
    targets = []
    for fd in fd_dir.iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed while we looked
            continue
    return [t for t in targets if t == db_path]


BAD_ENVIRONMENTS = [
    ("ANCHOR_WORKSPACE_ID", "bad id!"),
    ("ANCHOR_ACTOR_ID", ""),
    ("ANCHOR_DB_PATH", "{tmp}/missing-directory/anchor.db"),
    ("ANCHOR_DB_PATH", "{tmp}"),
    ("DATABASE_URL", "mysql://anchor@localhost/anchor"),
    ("DATABASE_URL", "postgres://nobody@127.0.0.1:1/anchor"),
    ("ANCHOR_LOG_LEVEL", "loud"),
    ("DJANGO_DEBUG", "maybe"),
    ("ANCHOR_TOOLS", "everything"),
    ("ALLOWED_HOSTS", "*"),
]


@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
@pytest.mark.parametrize(("variable", "value"), BAD_ENVIRONMENTS)
def test_bad_configuration_fails_at_start_up_with_one_line_naming_the_variable(
    variable, value, tmp_path
):
    env = base_env(ANCHOR_DB_PATH=str(tmp_path / "a.db"))
    env[variable] = value.format(tmp=tmp_path)
    done = subprocess.run(
        SERVE,
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert done.stdout == "", f"stdout must stay clean, got {done.stdout!r}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{done.stderr}"
    assert variable in lines[0], f"message does not name {variable}: {lines[0]}"
    assert "Traceback" not in done.stderr


@pytest.mark.sqlite  # a SQLite file of its own, whatever the backend of this run
def test_a_file_that_is_not_a_database_is_refused_naming_anchor_db_path(tmp_path):
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("these are notes, not a SQLite database\n" * 100)
    done = subprocess.run(
        SERVE,
        cwd=REPO_ROOT,
        env=base_env(ANCHOR_DB_PATH=str(not_a_db)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "ANCHOR_DB_PATH" in lines[0], done.stderr
