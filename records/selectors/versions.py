"""A record read as it stood at a past time, from its stored versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from records.errors import NOT_FOUND, AnchorError
from records.models import Record, RecordVersion
from records.selectors.serialize import iso


def state_as_of(record: Record, at: datetime) -> dict[str, Any]:
    version = (
        RecordVersion.objects.filter(record_id=record.pk, recorded_at__lte=at)
        .order_by("-version")
        .first()
    )
    if version is None:
        raise AnchorError(
            NOT_FOUND,
            f"as_of: record {record.pk} did not exist yet at {at.isoformat()}; it was created "
            f"at {iso(record.created_at)}.",
            field="as_of",
            created_at=iso(record.created_at),
        )
    return {
        "record_id": record.pk,
        "collection_id": record.collection_id,
        "collection_name": record.collection.name,
        "title": version.title,
        "data": version.data,
        "version": version.version,
        "status": "archived" if version.archived_at else "active",
        "created_at": iso(record.created_at),
        "updated_at": iso(version.recorded_at),
        "archived_at": iso(version.archived_at),
        "created_by": record.created_by,
        "aliases": version.aliases,
        "as_of": at.isoformat(),
        "current_version": record.version,
    }
