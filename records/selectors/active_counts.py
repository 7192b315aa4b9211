"""Active record counts per collection, from the trigger-kept count tables (migration 0010): one
row per collection asked for, whatever the workspace's size; no row means no active record."""

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
