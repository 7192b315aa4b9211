"""The collection catalog with active record counts, and one collection's entry in it."""

from __future__ import annotations

from typing import Any

from records.models import Collection, CollectionAlias
from records.selectors.active_counts import active_counts
from records.selectors.scoped import in_workspace
from records.selectors.serialize import aliases_by_owner, collection_dict

MAX_COLLECTIONS = 1000


def collection_list(*, workspace_id: str) -> dict[str, Any]:
    """Every collection (at most 1000, by name) with its description and active record count;
    three queries whatever the size (the counts are kept by triggers)."""
    by_name = Collection.objects.filter(workspace_id=workspace_id).order_by("name", "id")
    collections = list(by_name[: MAX_COLLECTIONS + 1])
    truncated = len(collections) > MAX_COLLECTIONS
    collections = collections[:MAX_COLLECTIONS]
    aliases = aliases_by_owner(
        CollectionAlias.objects.filter(workspace_id=workspace_id), "collection_id"
    )
    counts = active_counts(workspace_id, (collection.pk for collection in collections))
    return {
        "collections": [
            collection_dict(collection, aliases=aliases[collection.pk])
            | {"active_record_count": counts[collection.pk]}
            for collection in collections
        ],
        "count": len(collections),
        "truncated": truncated,
    }


def collection_entry(
    *, workspace_id: str, collection_id: str, field: str | None = None
) -> dict[str, Any]:
    """One collection as collection_list lists it (however many there are), or NOT_FOUND
    naming `field` (by default `collection_id`)."""
    collection = in_workspace(
        Collection.objects,
        workspace_id=workspace_id,
        pk=collection_id,
        kind="collection",
        field=field,
    )
    counts = active_counts(workspace_id, [collection.pk])
    return collection_dict(collection) | {"active_record_count": counts[collection.pk]}
