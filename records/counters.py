"""Reading and locking the revision counters that review tickets depend on.

A counter with no row has never moved: its value is 0. The triggers in records keep them.
"""

from __future__ import annotations

from collections.abc import Iterable

from records.models import RevisionCounter

CATALOG = "catalog"
ALL_NAMES = "names:*"


def names_key(collection_id: str | None) -> str:
    return f"names:{collection_id}" if collection_id else ALL_NAMES


def links_key(record_id: str) -> str:
    return f"links:{record_id}"


def counter_values(workspace_id: str, keys: Iterable[str]) -> dict[str, int]:
    wanted = sorted(set(keys))
    rows = RevisionCounter.objects.filter(workspace_id=workspace_id, key__in=wanted)
    found = dict(rows.values_list("key", "value"))
    return {key: found.get(key, 0) for key in wanted}


def lock_counters(workspace_id: str, keys: Iterable[str]) -> dict[str, int]:
    """Current values, with the rows locked until the transaction ends. Missing rows are
    created first so there is something to lock (else two transactions could both see "0")."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    RevisionCounter.objects.bulk_create(
        [RevisionCounter(workspace_id=workspace_id, key=k, value=0) for k in wanted],
        ignore_conflicts=True,
    )
    rows = (
        RevisionCounter.objects.select_for_update()
        .filter(workspace_id=workspace_id, key__in=wanted)
        .order_by("key")
        .values_list("key", "value")
    )
    return dict(rows)


def moved_counters(expected: dict[str, int], current: dict[str, int]) -> list[str]:
    return sorted(key for key, value in expected.items() if current.get(key, 0) != value)
