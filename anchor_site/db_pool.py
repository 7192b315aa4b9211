"""The HTTP server's PostgreSQL connection pool (Django's `OPTIONS["pool"]`, psycopg_pool).

Each request has a thread of its own, so each server process holds at most ANCHOR_DB_POOL_SIZE
connections, and requests beyond that wait (up to ANCHOR_DB_POOL_TIMEOUT_S) rather than crowd
PostgreSQL. Connections are checked before they are handed out; one that met a storage fault is
dropped (records.storage_faults). `why_no_connection` tells "every connection busy" from
"the database cannot be reached" by the pool's latest attempt to connect.
"""

from __future__ import annotations

from typing import Any, ClassVar

import psycopg

from records.storage_faults import CONNECTION_LOST, TOO_MANY_CONNECTIONS, UNREACHABLE, storage_fault

AT_CAPACITY = "at_capacity"
# What the 503 says for a fault cause, besides the generic sentence.
FAULT_SENTENCES = {
    TOO_MANY_CONNECTIONS: "PostgreSQL refused a new connection (all of its max_connections slots "
    "are taken)",
    CONNECTION_LOST: "The database connection was lost before the request could run",
    UNREACHABLE: "The server cannot reach its database (PostgreSQL is down, unreachable or "
    "refusing connections; the server reconnects by itself once it is back)",
}


def reset_pooled_connection(raw_connection: Any) -> None:
    """psycopg_pool's `reset` hook: runs as a connection goes back into the pool."""
    from records.query_bounds import reset_statement_settings

    if getattr(raw_connection, "anchor_fault", False):
        raw_connection.close()  # it met a storage fault (storage_faults): the pool drops it
        return

    reset_statement_settings(raw_connection)


class ObservedConnection(psycopg.Connection):
    """Remembers how the pool's latest (background) connect failed (`latest_error`), if it did."""

    latest_error: ClassVar[psycopg.Error | None] = None

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
        try:
            opened = super().connect(conninfo, **kwargs)
        except psycopg.Error as exc:
            # One attribute store, atomic under the GIL; on this class, the one the pool uses.
            ObservedConnection.latest_error = exc
            raise
        ObservedConnection.latest_error = None
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
        if ObservedConnection.latest_error is None:
            return AT_CAPACITY, "The server is at capacity (no database connection was free)"
        exc = ObservedConnection.latest_error
    cause = storage_fault(exc).cause
    return cause, FAULT_SENTENCES.get(
        cause, f"The database refused the request ({cause.replace('_', ' ')})"
    )


def close_pools() -> None:
    """Close this process's pools before it forks workers (threads and sockets must not cross)."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()
