"""Each database fault is told by the driver's own error, made for real where it can be."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from django.db import OperationalError
from psycopg import errors as pg_errors

from records import storage_faults
from records.storage_faults import storage_fault


def sqlite_error(run) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as raised:
        run()
    return raised.value


def wrapped(driver_error: Exception) -> OperationalError:
    """As Django raises it: its own class, the driver's error as the cause."""
    try:
        raise OperationalError(str(driver_error)) from driver_error
    except OperationalError as exc:
        return exc


@pytest.fixture
def db_file(tmp_path) -> Path:
    path = tmp_path / "faults.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x BLOB)")
    return path


def test_a_read_only_sqlite_file(db_file):
    read_only = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    error = sqlite_error(lambda: read_only.execute("INSERT INTO t VALUES (1)"))
    fault = storage_fault(wrapped(error))
    assert fault.cause == storage_faults.READ_ONLY
    assert "read-only" in fault.message and "-wal" in fault.message
    assert "no restart is needed" in fault.message


def test_a_full_sqlite_file(db_file):
    # The size limit SQLite reports exactly as it reports a full disk (SQLITE_FULL).
    db = sqlite3.connect(db_file)
    db.execute("PRAGMA max_page_count = 3")
    error = sqlite_error(lambda: db.execute("INSERT INTO t VALUES (zeroblob(100000))"))
    fault = storage_fault(wrapped(error))
    assert fault.cause == storage_faults.DISK_FULL and "full" in fault.message


def test_a_lock_held_past_the_busy_timeout(db_file):
    holder = sqlite3.connect(db_file, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(db_file, timeout=0, isolation_level=None)
    error = sqlite_error(lambda: waiter.execute("BEGIN IMMEDIATE"))
    assert storage_fault(wrapped(error)).cause == storage_faults.LOCKED


def test_a_file_that_cannot_be_opened(tmp_path):
    error = sqlite_error(lambda: sqlite3.connect(tmp_path / "missing" / "x.db"))
    assert storage_fault(error).cause == storage_faults.CANNOT_OPEN


def test_postgres_unreachable():
    # Nothing listens on port 1: refused at once, with no server needed.
    with pytest.raises(psycopg.OperationalError) as raised:
        psycopg.connect("postgresql://anchor@127.0.0.1:1/anchor", connect_timeout=5)
    fault = storage_fault(wrapped(raised.value))
    assert fault.cause == storage_faults.UNREACHABLE
    assert "Retry once it is back" in fault.message


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (pg_errors.ReadOnlySqlTransaction("cannot execute INSERT"), storage_faults.READ_ONLY),
        (pg_errors.DiskFull("could not extend file"), storage_faults.DISK_FULL),
        (pg_errors.TooManyConnections("too many"), storage_faults.TOO_MANY_CONNECTIONS),
        (
            psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already"),
            storage_faults.TOO_MANY_CONNECTIONS,
        ),
        (pg_errors.DeadlockDetected("deadlock"), storage_faults.LOCKED),
        (pg_errors.AdminShutdown("terminating connection"), storage_faults.CONNECTION_LOST),
        (
            psycopg.OperationalError("consuming input failed: server closed the connection"),
            storage_faults.CONNECTION_LOST,
        ),
        (pg_errors.UndefinedTable("no such table"), storage_faults.UNKNOWN),
    ],
)
def test_postgres_causes(error, cause):
    assert storage_fault(wrapped(error)).cause == cause


def test_anything_else_is_unknown_and_says_so():
    fault = storage_fault(OperationalError("disk I/O error"))  # no driver error behind it
    assert fault.cause == storage_faults.UNKNOWN
    assert "Retry" in fault.message and "server's log" in fault.message
