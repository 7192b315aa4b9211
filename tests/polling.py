"""Wait for a condition instead of sleeping for a guess: poll it until it holds or time runs out.

A fixed sleep is too short on a loaded machine (the test fails for nothing) and too long on a
quiet one (every run pays it). Tests wait here on what they actually need to see: a statement
waiting on a lock, a connection back in its pool, a server that has read what was sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# Long enough for a loaded machine, short enough that a condition that never comes fails soon.
WAIT_S = 30.0


def wait_until(condition: Callable[[], T], what: str, timeout: float = WAIT_S) -> T:
    """The condition's first truthy value; fails the test naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {timeout:.0f} s for {what}")
        time.sleep(0.02)


def holds_throughout(condition: Callable[[], object], seconds: float) -> bool:
    """Whether the condition stays truthy for `seconds`, checked as often as wait_until does.

    Only for what must NOT happen and leaves no trace when it doesn't (a write that stays
    unapplied): false as soon as it happens, so a failing run does not wait the window out.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not condition():
            return False
        time.sleep(0.02)
    return bool(condition())


def lock_waiters(cursor, database: str | None = None) -> int:
    """PostgreSQL: statements of the database (default: the cursor's) waiting on a lock."""
    # Inside a transaction the statistics views keep their first snapshot: drop it to see now.
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = coalesce(%s, current_database()) "
        "AND wait_event_type = 'Lock' AND state = 'active'",
        [database],
    )
    return cursor.fetchone()[0]


# /proc/net/tcp's socket states (include/net/tcp_states.h).
_ESTABLISHED, _LISTEN = "01", "0A"


def _sockets_on(port: int) -> list[tuple[str, int]]:
    """(state, bytes queued unread) of each IPv4 socket on this machine bound to `port`.

    For a listening socket the queue counts connections not yet accepted; for a connection,
    bytes received that the process has not read.
    """
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, queues = fields[1], fields[3], fields[4]
        if int(local.rsplit(":", 1)[1], 16) == port:
            found.append((state, int(queues.split(":")[1], 16)))
    return found


def server_has_read(port: int, connections: int) -> bool:
    """Whether the server listening on `port` (loopback) has accepted at least `connections`
    connections, none waits to be accepted, and it has read every byte sent on each."""
    sockets = _sockets_on(port)
    listening = [queued for state, queued in sockets if state == _LISTEN]
    accepted = [queued for state, queued in sockets if state == _ESTABLISHED]
    return (
        bool(listening)
        and not any(listening)
        and len(accepted) >= connections
        and not any(accepted)
    )
