"""A write applied only to be rolled back (a preview) holds no revision counter.

Counters moved by a dry run would stay locked until it ends, queueing writers behind a write
that never lands. On PostgreSQL `counters_left_alone` sets the transaction-local
`anchor.dry_run` the counter functions read (migration 0009); the rollback undoes it. SQLite
runs one writer at a time anyway. Inside it `in_dry_run()` is true, so no embedding is written."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import connection

_previewing: ContextVar[bool] = ContextVar("anchor_dry_run", default=False)


def in_dry_run() -> bool:
    """True inside `counters_left_alone`: whatever is written now will be rolled back."""
    return _previewing.get()


@contextmanager
def counters_left_alone() -> Iterator[None]:
    """Inside an atomic block that will be rolled back: its writes move no counter. Left
    normally, the setting is switched off again for the enclosing transaction's writes."""
    token = _previewing.set(True)
    try:
        if connection.vendor != "postgresql":
            yield
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('anchor.dry_run', 'on', true)")
        yield
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('anchor.dry_run', 'off', true)")
    finally:
        _previewing.reset(token)
