"""What a database error means to the caller: its cause, in words, and what fixes it.

Every door reports a refused database operation as STORAGE_ERROR; the cause (read-only, full
disk, lock, lost or refused connection) comes from the driver's codes, and the message says a
retry once it is fixed works (the servers reopen their connection)."""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from psycopg import errors as pg_errors

# details["cause"] of a STORAGE_ERROR: stable names a client may branch on.
READ_ONLY = "read_only"
DISK_FULL = "disk_full"
LOCKED = "locked"
CONNECTION_LOST = "connection_lost"
UNREACHABLE = "unreachable"
TOO_MANY_CONNECTIONS = "too_many_connections"
CANNOT_OPEN = "cannot_open"
IO_ERROR = "io_error"
UNKNOWN = "unknown"

# Every cause below but the unknown one heals by itself once fixed: say so, and why.
_RETRY = "no restart is needed (the next call reopens the database)"


@dataclass(frozen=True)
class StorageFault:
    cause: str
    message: str


_UNKNOWN_FAULT = StorageFault(
    UNKNOWN,
    "The database refused the operation; nothing was changed. Retry, and if it persists "
    "check the server's log.",
)


_TOO_MANY_CONNECTIONS = StorageFault(
    TOO_MANY_CONNECTIONS,
    "PostgreSQL refused a new connection: all of its connection slots (max_connections) are "
    "taken. Nothing was done. Retry shortly.",
)


def storage_fault(exc: BaseException) -> StorageFault:
    """The cause of a database error (Django's wrapper or the driver's own exception)."""
    # psycopg's errors if psycopg is loaded, read rather than imported: on SQLite it never is
    # (it costs a tenth of a stdio server's start), and then no psycopg error can exist.
    postgres = sys.modules.get("psycopg.errors")
    driver_errors = (sqlite3.Error,) if postgres is None else (sqlite3.Error, postgres.Error)
    driver_error = exc if isinstance(exc, driver_errors) else exc.__cause__
    if isinstance(driver_error, sqlite3.Error):
        return _sqlite_fault(getattr(driver_error, "sqlite_errorname", "") or "")
    if postgres is not None and isinstance(driver_error, postgres.Error):
        return _postgres_fault(driver_error)
    return _UNKNOWN_FAULT


def _sqlite_fault(name: str) -> StorageFault:
    # Extended codes carry the primary code as their prefix: SQLITE_READONLY_DBMOVED, ...
    if name.startswith("SQLITE_READONLY"):
        return StorageFault(
            READ_ONLY,
            "The database is read-only to this server: the SQLite file (ANCHOR_DB_PATH), its "
            "-wal or -shm file, or the folder holding them cannot be written. Nothing was "
            "changed; reads still work. Make them writable by the server's user, then retry; "
            f"{_RETRY}.",
        )
    if name.startswith("SQLITE_FULL"):
        return StorageFault(
            DISK_FULL,
            "The disk holding the database is full: the SQLite file (ANCHOR_DB_PATH) could not "
            "grow. Nothing was changed; reads still work. Free space on that disk, then retry; "
            f"{_RETRY}.",
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StorageFault(
            LOCKED,
            "Another process held the database's write lock for longer than the busy timeout, "
            "so this call gave up waiting; nothing was changed. Retry; if it keeps happening, "
            "look for a process keeping a long transaction open on the SQLite file.",
        )
    if name.startswith("SQLITE_CANTOPEN"):
        return StorageFault(
            CANNOT_OPEN,
            "The SQLite file (ANCHOR_DB_PATH) or its -wal/-shm file could not be opened: it was "
            "moved or deleted, or its folder cannot be read or written by the server's user. "
            f"Nothing was changed. Restore it, then retry; {_RETRY}.",
        )
    if name.startswith("SQLITE_IOERR"):
        return StorageFault(
            IO_ERROR,
            "The disk failed to read or write the SQLite file (ANCHOR_DB_PATH), an I/O error "
            f"({name}); nothing was changed. Check the disk, then retry; {_RETRY}.",
        )
    return _UNKNOWN_FAULT


def _postgres_fault(error: pg_errors.Error) -> StorageFault:
    from psycopg import errors as pg_errors  # loaded: error is one of its classes

    text = str(error)
    # psycopg's connect() failures carry no SQLSTATE, only the server's words after this.
    if text.startswith("connection failed"):
        if "too many clients" in text or "connection slots are reserved" in text:
            return _TOO_MANY_CONNECTIONS
        return StorageFault(
            UNREACHABLE,
            "The server could not connect to its PostgreSQL database (it is down, unreachable "
            "or refusing connections); nothing was done. Retry once it is back: the server "
            "reconnects by itself.",
        )
    if isinstance(error, pg_errors.TooManyConnections):
        return _TOO_MANY_CONNECTIONS
    if isinstance(error, pg_errors.ReadOnlySqlTransaction):
        return StorageFault(
            READ_ONLY,
            "The PostgreSQL database is read-only (a standby, or default_transaction_read_only "
            f"is on); nothing was changed. Retry once it accepts writes; {_RETRY}.",
        )
    if isinstance(error, pg_errors.DiskFull):
        return StorageFault(
            DISK_FULL,
            "The PostgreSQL server's disk is full; nothing was changed. Free space there, then "
            f"retry; {_RETRY}.",
        )
    if isinstance(error, (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected)):
        return StorageFault(
            LOCKED,
            "Another writer held a lock this call needed past its lock timeout (or the two "
            "waited on each other); nothing was changed. Retry the call as it is: it is safe, "
            "and it usually succeeds at once.",
        )
    # No SQLSTATE: the driver lost the socket under a statement (the server closed it or went
    # away). Class 08 and admin/crash shutdown are the server saying the same.
    state = error.sqlstate or ""
    if not state or state.startswith("08") or state in ("57P01", "57P02"):
        return StorageFault(
            CONNECTION_LOST,
            "The connection to the PostgreSQL database was lost during the call (the database "
            "restarted or closed it), so the call did not complete. Retry: the next call "
            "reconnects. Retrying commit_write is safe: it applies once or returns the stored "
            "result.",
        )
    return _UNKNOWN_FAULT
