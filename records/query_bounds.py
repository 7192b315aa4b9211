"""Bound every query of a call in time, and stop it when the call is cancelled.

Inside `bounded_queries(...)` each statement is limited to the call's time (PostgreSQL:
`statement_timeout`, with a shorter `lock_timeout` to tell lock waits apart; SQLite: a
progress handler), and once the call is cancelled no statement starts and the running one is
interrupted, so its transaction rolls back. A commit already made stays."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from records.storage_faults import LOCKED, storage_fault

# How many SQLite virtual-machine steps run between two looks at the clock: about 0.1 ms of
# work, so a look costs nothing measurable and a runaway statement stops within a millisecond.
SQLITE_PROGRESS_STEPS = 10_000
MAX_TAG = 63  # PostgreSQL keeps this many bytes of application_name
# The share of a statement's time limit it may spend waiting for another writer's lock.
LOCK_WAIT_SHARE = 0.9
QUERY_CANCELED = "57014"  # SQLSTATE of a statement stopped by a timeout or a cancel


class CallCancelled(Exception):
    """The call's client cancelled it; nothing more may run, and its reply is never sent."""


@dataclass
class QueryBound:
    """One call's limits, shared between its worker thread and whoever may cancel it."""

    timeout_s: float
    # Names the call in pg_stat_activity (application_name), so a cancel that reaches another
    # server process can still stop its statement: see cancel_tagged_statements.
    tag: str = ""
    cancelled: threading.Event = field(default_factory=threading.Event)
    statement_started: float | None = None
    timed_out: bool = False
    _raw_connection: Any = None

    def cancel(self) -> None:
        """Stop the call from any thread: no new statement starts, the running one aborts."""
        self.cancelled.set()
        raw = self._raw_connection  # None before the call's first statement
        # Both are documented as safe to call from another thread: sqlite3's interrupt() and
        # psycopg's cancel() (which sends a cancel request on a separate connection).
        stop = getattr(raw, "interrupt", None) or getattr(raw, "cancel", None)
        if stop is not None:
            with contextlib.suppress(Exception):
                stop()

    def over_time(self) -> bool:
        started = self.statement_started
        return started is not None and time.monotonic() - started > self.timeout_s


_current = threading.local()


def current_bound() -> QueryBound | None:
    return getattr(_current, "bound", None)


def _sqlite_progress() -> int:
    """Non-zero aborts the running SQLite statement ("interrupted")."""
    bound = current_bound()
    if bound is None:
        return 0
    if bound.cancelled.is_set():
        return 1
    if bound.over_time():
        bound.timed_out = True
        return 1
    return 0


def prepare_new_connection(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """connection_created receiver (records.apps): make a new connection boundable."""
    if connection.vendor == "sqlite" and connection.connection is not None:
        connection.connection.set_progress_handler(_sqlite_progress, SQLITE_PROGRESS_STEPS)
    # A new PostgreSQL session starts with the server's defaults again.
    connection.anchor_statement_settings = None  # type: ignore[attr-defined]
    bound = current_bound()
    if connection.vendor == "postgresql" and bound is not None:
        # Opened inside a call (run_tool replaced a kept connection past CONN_MAX_AGE): the
        # call's limits hold on it too, or a lock wait would never end.
        _bound_postgres_statements(bound.timeout_s, bound.tag)


def _statement_guard(bound: QueryBound) -> Callable[..., Any]:
    def guard(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        # Rolling back (to a savepoint, or the whole transaction) must still run.
        if bound.cancelled.is_set() and not sql.lstrip()[:8].upper().startswith("ROLLBACK"):
            raise CallCancelled("the call was cancelled; its transaction is rolled back")
        bound._raw_connection = connection.connection
        # Kept after execute() returns: SQLite hands back the first row and goes on scanning
        # while the rest are fetched, and that work is the same statement's, under its clock.
        bound.statement_started = time.monotonic()
        try:
            return execute(sql, params, many, context)
        except Exception as exc:
            # A PostgreSQL statement stopped by its statement_timeout, or by pg_cancel_backend
            # (a cancel from another server process: "due to user request").
            cause = exc.__cause__  # psycopg's error, with its SQLSTATE
            cancel = cause if getattr(cause, "sqlstate", None) == QUERY_CANCELED else None
            by_request = cancel is not None and "user request" in str(cancel)
            if bound.cancelled.is_set() or by_request:
                bound.cancelled.set()  # stopped from another process: cancelled all the same
                raise CallCancelled("the call was cancelled while a statement ran") from None
            # A wait for another writer's lock that ran out is no slow query: the envelope
            # reports it as STORAGE_ERROR (locked), to retry as it is.
            if (bound.over_time() or cancel is not None) and storage_fault(exc).cause != LOCKED:
                bound.timed_out = True
            raise

    return guard


def _bound_postgres_statements(timeout_s: float, tag: str) -> None:
    # Once per connection and tag: settings cost a round trip and stay until they change.
    # jit off: planning a JIT for one wide WHERE (20 conditions x 100 values) took longer
    # than running the query; the statements here are short OLTP reads and writes. A wait for
    # a lock gives up first (LOCK_WAIT_SHARE of the limit), so it is told from a slow query.
    settings = (max(1, int(timeout_s * 1000)), tag)
    connection.ensure_connection()  # a reconnect resets the cached value (connection_created)
    if getattr(connection, "anchor_statement_settings", None) == settings:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('statement_timeout', %s, false), set_config('jit', 'off', false),"
            " set_config('application_name', %s, false), set_config('lock_timeout', %s, false)",
            (str(settings[0]), tag[:MAX_TAG], str(max(1, int(settings[0] * LOCK_WAIT_SHARE)))),
        )
    connection.anchor_statement_settings = settings  # type: ignore[attr-defined]


def reset_statement_settings(raw_connection: Any) -> None:
    """Undo what `_bound_postgres_statements` set, on a connection going back to a pool: the
    next request must not inherit the call's time limit, nor its tag (a late cancel matches it)."""
    raw_connection.execute(
        "RESET statement_timeout; RESET jit; RESET application_name; RESET lock_timeout"
    )
    if not raw_connection.autocommit:
        raw_connection.commit()


def cancel_tagged_statements(tag: str) -> None:
    """Stop the running PostgreSQL statement of the call tagged `tag`, in whichever server
    process runs it (the same database role may signal its own backends)."""
    if connection.vendor != "postgresql" or not tag:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()",
            (tag[:MAX_TAG],),
        )


@contextlib.contextmanager
def bounded_queries(bound: QueryBound) -> Iterator[QueryBound]:
    """Run the block with every statement on this thread's connection bounded by `bound`."""
    if connection.vendor == "postgresql":
        _bound_postgres_statements(bound.timeout_s, bound.tag)
    _current.bound = bound
    try:
        with connection.execute_wrapper(_statement_guard(bound)):
            yield bound
    finally:
        _current.bound = None
        bound._raw_connection = None
