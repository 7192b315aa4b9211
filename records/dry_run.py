"""A write applied only to be rolled back (a preview) holds no revision counter.

The counter triggers lock the counters they move until the transaction ends; a dry run that
moved them would queue behind every writer of the same collection, and they behind it, for a
write that never lands. On PostgreSQL `counters_left_alone` sets the transaction-local
`anchor.dry_run`, which the counter functions read (migration 0009); rolling the dry run back
(its savepoint, or its transaction) undoes the setting with everything else. SQLite runs one
writer at a time whatever is locked, and its triggers keep moving the counters there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def counters_left_alone() -> Iterator[None]:
    """Inside a transaction.atomic block that will be rolled back: its writes move no counter.

    Left normally (a dry run that did not raise), the setting is switched off again, so the
    enclosing transaction's own writes still move theirs.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('anchor.dry_run', 'on', true)")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('anchor.dry_run', 'off', true)")
