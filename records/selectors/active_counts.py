"""Active record counts per collection, read from the trigger-kept count tables.

One query reading one row per collection asked for (plus any count changes a kept dry run left,
normally none), however many records the workspace holds; migration 0010 keeps both tables.
A collection without a row has no active record.
"""

from __future__ import annotations

from collections.abc import Iterable

from records.models import CollectionCount, CollectionCountChange


def active_counts(workspace_id: str, collection_ids: Iterable[str]) -> dict[str, int]:
    """{collection_id: active record count} for every ID given, 0 where none is active."""
    wanted = list(dict.fromkeys(collection_ids))
    counts = dict.fromkeys(wanted, 0)
    if not wanted:
        return counts
    stored = CollectionCount.objects.filter(
        workspace_id=workspace_id, collection_id__in=wanted
    ).values_list("collection_id", "active")
    changes = CollectionCountChange.objects.filter(
        workspace_id=workspace_id, collection_id__in=wanted
    ).values_list("collection_id", "delta")
    for collection_id, amount in stored.union(changes, all=True):
        counts[collection_id] += amount
    return counts
