"""A record read as it stood at a past time, from its stored versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from records.errors import NOT_FOUND, AnchorError
from records.models import Record, RecordVersion
from records.selectors.serialize import iso, record_dict


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
    return record_dict(record, version=version) | {
        "as_of": at.isoformat(),
        "current_version": record.version,
    }
