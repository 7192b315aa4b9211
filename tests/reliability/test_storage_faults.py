"""A database that cannot be written heals without a restart, and the refusal says why.

Over stdio with the official MCP client, as an agent meets it: mcp_serve starts on a database
it cannot write (a read-only SQLite file, a full disk, a read-only PostgreSQL database). Reads
are served; a write is refused with STORAGE_ERROR naming the cause (details.cause) and writes
nothing; once the cause is fixed, the same process commits the very next write, even when it
served a read in between.

SQLite opens a write-protected file read-only and stays so, and Django keeps a SQLite
connection whatever failed on it: before the server closed a failed connection, the file being
made writable again changed nothing until a restart. Root writes through any file mode, so as
root the server runs without the capabilities that let it (setpriv), as an ordinary user would.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.db import connection
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.server import REPO_ROOT, SERVE, base_env, envelope, postgres_url
from tests.envelope import expect_ok, expect_refused
from tests.reliability import flows
from tests.reliability.conftest import ON_POSTGRES
from tests.reliability.harness import RawServer, Store

IS_ROOT = os.geteuid() == 0
SETPRIV = shutil.which("setpriv")
# The capabilities that let root ignore file modes; without them root is held to them too.
OVERRIDES = "-dac_override,-dac_read_search"
sqlite_only = pytest.mark.skipif(ON_POSTGRES, reason="a SQLite file's own fault")


def as_ordinary_user() -> list[str]:
    """The prefix that makes the server obey file modes: nothing unless we are root."""
    if not IS_ROOT:
        return []
    if SETPRIV is None:
        pytest.skip("running as root, and setpriv (util-linux) is missing to drop root's rights")
    return [SETPRIV, f"--bounding-set={OVERRIDES}", f"--inh-caps={OVERRIDES}"]


@asynccontextmanager
async def official_client(env: dict[str, str], log: Path) -> AsyncIterator[ClientSession]:
    command = [*as_ordinary_user(), *SERVE]
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=REPO_ROOT)
    with open(log, "a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=60)) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return envelope(await session.call_tool(name, arguments))


def prepare_a_create(server_env: dict[str, str], log: Path) -> tuple[str, str, str]:
    """With a writable database: a collection and a prepared create_record, not committed.

    Returns (collection_id, title, action_id). The server ends cleanly, so a SQLite file is
    left alone: no -wal or -shm beside it."""
    server = RawServer(server_env, log)
    try:
        server.initialize()
        collection_id = flows.create_collection(server, "faults")
        title = f"Written after the fault {uuid.uuid4().hex[:8]}"
        review = server.ok("resolve_record", {"query": title, "collection_id": collection_id})
        prepared = server.ok(
            "prepare_write",
            {
                "operation": "create_record",
                "arguments": {"collection_id": collection_id, "title": title, "data": {}},
                "review_ids": [review["resolution_id"]],
                "decision_reason": "storage fault test",
                "clarification": flows.CLARIFIED,
            },
        )
        assert server.close() == 0
    finally:
        server.kill()
    return collection_id, title, prepared["action_id"]


def refused_for(reply: dict[str, Any], name: str, cause: str, words: str) -> None:
    error = expect_refused(reply, name, "STORAGE_ERROR")
    assert error["details"] == {"cause": cause}, error
    message = error["message"]
    assert words in message and "nothing was changed" in message.lower(), message
    assert "no restart is needed" in message and "retry" in message.lower(), message
    assert "Traceback" not in message and "sqlite3" not in message, message


TABLES = ("records_record", "records_auditevent", "workflow_reviewticket")


def row_counts(database: dict[str, str]) -> dict[str, Any]:
    """What a write would change, read afresh from the database."""
    store = Store(database)
    try:
        counts: dict[str, Any] = {t: store.value(f"SELECT count(*) FROM {t}") for t in TABLES}
        counts["actions"] = store.rows(
            "SELECT state, count(*) FROM workflow_preparedaction GROUP BY state ORDER BY state"
        )
        return counts
    finally:
        store.close()


def survive(
    database: dict[str, str],
    log: Path,
    *,
    break_it: Callable[[], object],
    fix_it: Callable[[], object],
    while_serving: bool = False,
    cause: str,
    words: str,
) -> tuple[str, str]:
    """The scenario every fault shares; returns (action_id, title) of the healed write.

    The fault comes before the server starts, or once it has served a read (while_serving):
    a disk fills under a running server, but one that starts on a full disk cannot make the
    -wal and -shm files it needs to read at all."""
    server_env = base_env(**database)
    collection_id, title, action_id = prepare_a_create(server_env, log)
    before = row_counts(database)

    async def scenario() -> None:
        if not while_serving:
            break_it()
        async with official_client(server_env, log) as session:
            found = expect_ok(
                await call(session, "search_records", {"collection_id": collection_id}), "search"
            )
            assert found["count"] == 0
            if while_serving:
                break_it()
                found = await call(session, "search_records", {"collection_id": collection_id})
                assert found["ok"], f"reads are served while writes are refused: {found}"
            commit = await call(session, "commit_write", {"action_id": action_id})
            refused_for(commit, "commit_write", cause, words)
            resolve = await call(
                session, "resolve_record", {"query": title, "collection_id": collection_id}
            )
            refused_for(resolve, "resolve_record", cause, words)
            assert row_counts(database) == before, "a refused call wrote something"
            # A read served after the refusals opens a connection in the fault: it must not
            # cost the first write after the fix.
            found = await call(session, "search_records", {"collection_id": collection_id})
            assert found["ok"], found

            fix_it()
            healed = expect_ok(
                await call(session, "commit_write", {"action_id": action_id}), "commit_write"
            )
            assert healed["status"] == "committed" and "replayed" not in healed, healed
            again = expect_ok(
                await call(session, "resolve_record", {"query": title}), "resolve_record"
            )
            assert again["status"] == "resolved", "the healed write is found by name"

    anyio.run(scenario)
    server_log = log.read_text()
    assert f"a tool call was refused: {cause}" in server_log, server_log[-3000:]
    assert "Traceback" not in server_log, server_log[-3000:]
    return action_id, title


def assert_written_once(store: Store, action_id: str, title: str) -> None:
    """The healed commit wrote its record once, whole."""
    assert store.action_state(action_id) == "committed"
    assert store.written_by_action(action_id) == {
        "records": 1,
        "relationships": 0,
        "record_events": 1,
        "relationship_events": 0,
    }
    assert store.value("SELECT count(*) FROM records_record WHERE title = ?", (title,)) == 1
    assert not store.integrity_problems()


# --- a read-only SQLite file ---------------------------------------------------------------------


def database_files(path: Path) -> list[Path]:
    return [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]


def set_mode(path: Path, mode: int) -> None:
    # SQLite gives the -wal and -shm files it makes the database's own mode.
    for each in database_files(path):
        if each.exists():
            each.chmod(mode)


@sqlite_only
def test_a_read_only_sqlite_file_refuses_writes_then_heals_in_the_same_process(
    database, store, tmp_path
):
    db = Path(database["ANCHOR_DB_PATH"])
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH

    action_id, title = survive(
        database,
        tmp_path / "server.log",
        break_it=lambda: set_mode(db, read_only),
        fix_it=lambda: set_mode(db, 0o644),
        cause="read_only",
        words="read-only to this server",
    )
    assert_written_once(store, action_id, title)


# --- a full disk ---------------------------------------------------------------------------------


@contextmanager
def small_disk(where: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (root only: mounting needs it)."""
    if not IS_ROOT or shutil.which("mount") is None:
        pytest.skip("a full disk is made by mounting a small tmpfs, which needs root")
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path) -> Path:
    """Write a ballast file until the disk has no block left; returns it."""
    ballast = disk / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == 28, exc  # ENOSPC
    try:  # the last partial block
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    os.close(fd)
    assert shutil.disk_usage(disk).free == 0
    return ballast


@sqlite_only
def test_a_full_disk_refuses_writes_then_heals_in_the_same_process(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        database = {"ANCHOR_DB_PATH": str(disk / "anchor.db")}
        ballast: list[Path] = []
        action_id, title = survive(
            database,
            tmp_path / "server.log",
            break_it=lambda: ballast.append(fill(disk)),
            fix_it=lambda: ballast.pop().unlink(),
            while_serving=True,
            cause="disk_full",
            words="disk holding the database is full",
        )
        store = Store(database)
        try:
            assert_written_once(store, action_id, title)
        finally:
            store.close()


# --- a read-only PostgreSQL database ------------------------------------------------------------


def the_database_is_read_only(read_only: bool) -> None:
    """default_transaction_read_only for this test's database: new sessions start read-only.

    Through a connection of its own (the scenario runs in an event loop, where Django's may
    not be used), which the setting cannot stop since it turns it off for itself first."""
    import psycopg

    settings = connection.settings_dict
    with psycopg.connect(postgres_url(settings), autocommit=True) as admin:
        admin.execute("SET default_transaction_read_only = off")
        name = psycopg.sql.Identifier(settings["NAME"])
        if read_only:
            admin.execute(
                psycopg.sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(
                    name
                )
            )
        else:
            admin.execute(
                psycopg.sql.SQL("ALTER DATABASE {} RESET default_transaction_read_only").format(
                    name
                )
            )


@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL: set DATABASE_URL")
@pytest.mark.django_db(transaction=True)
def test_a_read_only_postgres_database_refuses_writes_then_heals_in_the_same_process(
    database, store, tmp_path
):
    try:
        action_id, title = survive(
            database,
            tmp_path / "server.log",
            break_it=lambda: the_database_is_read_only(True),
            fix_it=lambda: the_database_is_read_only(False),
            cause="read_only",
            words="PostgreSQL database is read-only",
        )
    finally:
        the_database_is_read_only(False)
    assert_written_once(store, action_id, title)
