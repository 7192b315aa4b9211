"""What a database error means to the caller (its cause, in words, and what fixes it), and the
connections to give up: one that met such a fault, or one left read-only by a healed database.

Every door reports a refused database operation as STORAGE_ERROR; the cause (read-only, full
disk, lock, lost or refused connection) comes from the driver's codes, and the message says a
retry once it is fixed works (the servers reopen their connection).

A pooled connection that met a read-only, disk-full or lost-connection error is closed as it
goes back (anchor_site.db_pool); a kept one (stdio) by the tool call that met it. A connection
opened read-only (PostgreSQL's default_transaction_read_only, an unwritable SQLite file) stays
so after the database heals: the servers look before it serves a call and replace it. The look
is free: PostgreSQL reports the setting, and only a SQLite connection opened read-only is checked.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError
from django.db.backends.base.base import BaseDatabaseWrapper

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
_SQLITE_LOCKED = StorageFault(
    LOCKED,
    "Another process held the database's write lock for longer than the busy timeout, so this "
    "call gave up waiting; nothing was changed. Retry; if it keeps happening, look for a "
    "process keeping a long transaction open on the SQLite file.",
)
_POSTGRES_LOCKED = StorageFault(
    LOCKED,
    "Another writer held a lock this call needed past its lock timeout (or the two waited on "
    "each other); nothing was changed. Retry the call as it is: it is safe, and it usually "
    "succeeds at once.",
)

# By the primary result code, which extended codes carry as their prefix
# (SQLITE_READONLY_DBMOVED, ...); {name} is the code met.
_SQLITE_FAULTS = {
    "SQLITE_READONLY": StorageFault(
        READ_ONLY,
        "The database is read-only to this server: the SQLite file (ANCHOR_DB_PATH), its -wal "
        "or -shm file, or the folder holding them cannot be written. Nothing was changed; reads "
        f"still work. Make them writable by the server's user, then retry; {_RETRY}.",
    ),
    "SQLITE_FULL": StorageFault(
        DISK_FULL,
        "The disk holding the database is full: the SQLite file (ANCHOR_DB_PATH) could not "
        "grow. Nothing was changed; reads still work. Free space on that disk, then retry; "
        f"{_RETRY}.",
    ),
    "SQLITE_BUSY": _SQLITE_LOCKED,
    "SQLITE_LOCKED": _SQLITE_LOCKED,
    "SQLITE_CANTOPEN": StorageFault(
        CANNOT_OPEN,
        "The SQLite file (ANCHOR_DB_PATH) or its -wal/-shm file could not be opened: it was "
        "moved or deleted, or its folder cannot be read or written by the server's user. "
        f"Nothing was changed. Restore it, then retry; {_RETRY}.",
    ),
    "SQLITE_IOERR": StorageFault(
        IO_ERROR,
        "The disk failed to read or write the SQLite file (ANCHOR_DB_PATH), an I/O error "
        f"({{name}}); nothing was changed. Check the disk, then retry; {_RETRY}.",
    ),
}

# By SQLSTATE.
_POSTGRES_FAULTS = {
    "53300": _TOO_MANY_CONNECTIONS,
    "25006": StorageFault(
        READ_ONLY,
        "The PostgreSQL database is read-only (a standby, or default_transaction_read_only is "
        f"on); nothing was changed. Retry once it accepts writes; {_RETRY}.",
    ),
    "53100": StorageFault(
        DISK_FULL,
        "The PostgreSQL server's disk is full; nothing was changed. Free space there, then "
        f"retry; {_RETRY}.",
    ),
    "55P03": _POSTGRES_LOCKED,  # lock_not_available
    "40P01": _POSTGRES_LOCKED,  # deadlock_detected
}


def storage_fault(exc: BaseException) -> StorageFault:
    """The cause of a database error (Django's wrapper or the driver's own exception)."""
    # psycopg's errors if psycopg is loaded, read rather than imported: on SQLite it never is
    # (it costs a tenth of a stdio server's start), and then no psycopg error can exist.
    postgres = sys.modules.get("psycopg.errors")
    driver_errors = (sqlite3.Error,) if postgres is None else (sqlite3.Error, postgres.Error)
    driver_error = exc if isinstance(exc, driver_errors) else exc.__cause__
    if isinstance(driver_error, sqlite3.Error):
        name = getattr(driver_error, "sqlite_errorname", "") or ""
        for prefix, fault in _SQLITE_FAULTS.items():
            if name.startswith(prefix):
                return StorageFault(fault.cause, fault.message.format(name=name))
        return _UNKNOWN_FAULT
    if postgres is not None and isinstance(driver_error, postgres.Error):
        return _postgres_fault(str(driver_error), driver_error.sqlstate or "")
    return _UNKNOWN_FAULT


def _postgres_fault(text: str, state: str) -> StorageFault:
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
    if state in _POSTGRES_FAULTS:
        return _POSTGRES_FAULTS[state]
    # No SQLSTATE: the driver lost the socket under a statement (the server closed it or went
    # away). Class 08 and admin/crash shutdown are the server saying the same.
    if not state or state.startswith("08") or state in ("57P01", "57P02"):
        return StorageFault(
            CONNECTION_LOST,
            "The connection to the PostgreSQL database was lost during the call (the database "
            "restarted or closed it), so the call did not complete. Retry: the next call "
            "reconnects. Retrying commit_write is safe: it applies once or returns the stored "
            "result.",
        )
    return _UNKNOWN_FAULT


READ_ONLY_SETTING = "default_transaction_read_only"
# A pooled connection that met one of these is closed rather than handed out again.
GIVE_UP_ON = (READ_ONLY, DISK_FULL, CONNECTION_LOST)

# Whether a session read-only by default would start writable now: a setting from the database
# or role settings is compared with what those say now, most specific first (one from the
# server's configuration follows its reloads).
LEFT_READ_ONLY = """
SELECT s.source NOT IN (
           'default', 'configuration file', 'command line', 'environment variable', 'client')
       AND NOT coalesce((
           SELECT split_part(c, '=', 2)::bool
           FROM pg_db_role_setting r, unnest(r.setconfig) c
           WHERE starts_with(c, 'default_transaction_read_only=')
             AND r.setdatabase IN (
                 0, (SELECT oid FROM pg_database WHERE datname = current_database()))
             AND r.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = session_user))
           ORDER BY r.setrole <> 0 DESC, r.setdatabase <> 0 DESC
           LIMIT 1), false)
FROM pg_settings s WHERE s.name = 'default_transaction_read_only'
"""


def postgres_left_read_only(raw: Any) -> bool:
    """A psycopg connection whose session is read-only though a new one would not be."""
    if raw.info.parameter_status(READ_ONLY_SETTING) != "on":
        return False
    row = raw.execute(LEFT_READ_ONLY).fetchone()
    if not raw.autocommit:
        raw.rollback()  # the look opened a transaction; leave the connection idle
    return bool(row and row[0])


def note_new_connection(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """connection_created receiver (records.apps), on every connect (a pool's hand-out too):
    a pooled connection left read-only is dropped with its idle siblings and another taken; a
    pooled one notes the faults it meets; a SQLite one notes whether it opened read-only."""
    pool = getattr(connection, "pool", None)
    if pool is not None:
        if postgres_left_read_only(connection.connection):
            connection.connection.close()
            connection.close()  # a closed connection goes back only to be dropped
            pool.drain()
            connection.connect()  # runs this receiver again, for the new connection
            return
        if _note_faults not in connection.execute_wrappers:
            # First, so a bound's own wrapper (pushed and popped around a call) stays on top.
            connection.execute_wrappers.insert(0, _note_faults)
    opened_read_only = False
    if connection.vendor == "sqlite":
        path = str(connection.settings_dict["NAME"])
        opened_read_only = os.path.exists(path) and not os.access(path, os.W_OK)
    connection.anchor_opened_read_only = opened_read_only  # type: ignore[attr-defined]


def left_read_only(connection: BaseDatabaseWrapper) -> bool:
    """The open connection is read-only though the database it reaches no longer is."""
    raw = connection.connection
    if raw is None:
        return False
    if connection.vendor == "postgresql":
        return postgres_left_read_only(raw)
    if getattr(connection, "anchor_opened_read_only", False):
        return os.access(str(connection.settings_dict["NAME"]), os.W_OK)
    return False


def _note_faults(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    try:
        return execute(sql, params, many, context)
    except DatabaseError as exc:
        raw = context["connection"].connection
        if raw is not None and storage_fault(exc).cause in GIVE_UP_ON:
            raw.anchor_fault = True  # read by anchor_site.db_pool as it goes back
        raise
