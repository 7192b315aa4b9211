"""The HTTP server's PostgreSQL connection pool (Django's `OPTIONS["pool"]`, psycopg_pool).

Over HTTP every request runs on a thread of its own, so a kept connection would be stranded
with its finished thread: without a pool, each request opened a connection (several ms) and
nothing capped how many were open at once. With one, each server process holds at most
ANCHOR_DB_POOL_SIZE connections: requests beyond that wait for one to come back (up to
ANCHOR_DB_POOL_TIMEOUT_S) instead of crowding PostgreSQL, where more transactions in flight
than cores only lengthen every lock a writer holds. stdio keeps its one long-lived connection.
"""

from __future__ import annotations

from typing import Any

DEFAULT_POOL_SIZE = 4
DEFAULT_POOL_TIMEOUT_S = 20


def reset_pooled_connection(raw_connection: Any) -> None:
    """psycopg_pool's `reset` hook: runs as a connection goes back into the pool."""
    from records.query_bounds import reset_statement_settings

    reset_statement_settings(raw_connection)


def pool_options(size: int, timeout_s: int) -> dict[str, Any]:
    return {
        # One connection opened ahead; the rest as load asks for them.
        "min_size": 1,
        "max_size": size,
        "timeout": timeout_s,
        "reset": reset_pooled_connection,
    }


def close_pools() -> None:
    """Close this process's pools, before it forks workers: a pool's threads do not survive a
    fork, and a child must never share the parent's sockets."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()
