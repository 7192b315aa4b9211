"""The HTTP server's PostgreSQL connection pool (Django's `OPTIONS["pool"]`, psycopg_pool).

Over HTTP every request runs on a thread of its own, so a kept connection would be stranded
with its finished thread: without a pool, each request opened a connection (several ms) and
nothing capped how many were open at once. With one, each server process holds at most
ANCHOR_DB_POOL_SIZE connections: requests beyond that wait for one to come back (up to
ANCHOR_DB_POOL_TIMEOUT_S) instead of crowding PostgreSQL, where more transactions in flight
than cores only lengthen every lock a writer holds. stdio keeps its one long-lived connection.

Each connection is checked before it is handed out (psycopg_pool's `check_connection`, which
Django installs when CONN_HEALTH_CHECKS is on), so one the database closed is replaced unseen;
one that met a storage fault, or was left read-only by a database that is writable again, is
dropped too (records.connection_health).
When none can be had, `why_no_connection` tells "every connection busy" from "the database
cannot be reached", by the outcome of the pool's latest attempt to connect.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from records.storage_faults import (
    CONNECTION_LOST,
    TOO_MANY_CONNECTIONS,
    UNREACHABLE,
    storage_fault,
)

DEFAULT_POOL_SIZE = 4
DEFAULT_POOL_TIMEOUT_S = 20
AT_CAPACITY = "at_capacity"


def reset_pooled_connection(raw_connection: Any) -> None:
    """psycopg_pool's `reset` hook: runs as a connection goes back into the pool."""
    from records.query_bounds import reset_statement_settings

    if getattr(raw_connection, "anchor_fault", False):
        raw_connection.close()  # it met a storage fault (connection_health): the pool drops it
        return

    reset_statement_settings(raw_connection)


class _LatestConnect:
    """Whether the pool's latest attempt to open a connection failed, and why."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.error: psycopg.Error | None = None

    def record(self, error: psycopg.Error | None) -> None:
        with self._lock:
            self.error = error


latest_connect = _LatestConnect()


class ObservedConnection(psycopg.Connection):  # type: ignore[type-arg]
    """psycopg's connection, remembering how the pool's latest connect went (its workers
    open connections in the background, where a failure is otherwise only logged)."""

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
        try:
            opened = super().connect(conninfo, **kwargs)
        except psycopg.Error as exc:
            latest_connect.record(exc)
            raise
        latest_connect.record(None)
        return opened


def pool_options(size: int, timeout_s: int) -> dict[str, Any]:
    return {
        # One connection opened ahead; the rest as load asks for them.
        "min_size": 1,
        "max_size": size,
        "timeout": timeout_s,
        "reset": reset_pooled_connection,
        "connection_class": ObservedConnection,
    }


def why_no_connection(exc: BaseException) -> tuple[str, str]:
    """(cause, sentence) for a request that got no database connection, for its 503."""
    from psycopg_pool import PoolTimeout

    if isinstance(exc.__cause__, PoolTimeout):
        if latest_connect.error is None:
            return AT_CAPACITY, "The server is at capacity (no database connection was free)"
        exc = latest_connect.error
    fault = storage_fault(exc)
    if fault.cause == TOO_MANY_CONNECTIONS:
        return fault.cause, (
            "PostgreSQL refused a new connection (all of its max_connections slots are taken)"
        )
    if fault.cause == CONNECTION_LOST:
        return fault.cause, "The database connection was lost before the request could run"
    if fault.cause == UNREACHABLE:
        return fault.cause, (
            "The server cannot reach its database (PostgreSQL is down, unreachable or refusing "
            "connections; the server reconnects by itself once it is back)"
        )
    return fault.cause, f"The database refused the request ({fault.cause.replace('_', ' ')})"


def close_pools() -> None:
    """Close this process's pools, before it forks workers: a pool's threads do not survive a
    fork, and a child must never share the parent's sockets."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()
