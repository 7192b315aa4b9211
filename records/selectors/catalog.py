"""The collection catalog with active record counts."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from records.models import Collection, CollectionAlias, Record
from records.selectors.serialize import collection_dict

MAX_COLLECTIONS = 1000


def collection_list(*, workspace_id: str) -> dict[str, Any]:
    """Every collection (at most 1000, by name) with its description and active record count.

    Three queries whatever the size: collections, their aliases, and one grouped count.
    """
    collections = list(
        Collection.objects.filter(workspace_id=workspace_id).order_by("name", "id")[
            : MAX_COLLECTIONS + 1
        ]
    )
    truncated = len(collections) > MAX_COLLECTIONS
    collections = collections[:MAX_COLLECTIONS]
    aliases: dict[str, list[str]] = {}
    for collection_id, alias in (
        CollectionAlias.objects.filter(workspace_id=workspace_id)
        .order_by("alias")
        .values_list("collection_id", "alias")
    ):
        aliases.setdefault(collection_id, []).append(alias)
    counts = dict(
        Record.objects.filter(workspace_id=workspace_id, archived_at__isnull=True)
        .values("collection_id")
        .annotate(active=Count("id"))
        .values_list("collection_id", "active")
        .order_by()
    )
    return {
        "collections": [
            collection_dict(collection, aliases=aliases.get(collection.pk, []))
            | {"active_record_count": counts.get(collection.pk, 0)}
            for collection in collections
        ],
        "count": len(collections),
        "truncated": truncated,
    }
