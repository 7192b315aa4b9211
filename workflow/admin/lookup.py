"""Titles for the IDs a prepared write names: every record and collection in two queries.

A reviewer reads names, not IDs. The review page and the queue's one-line summaries collect
every ID they will show first, then fetch them together, so a 100-row import or a page of 100
actions costs the same two queries as one write.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from records.ids import is_valid_id
from records.models import Collection, Record
from workflow.operations.checks import REFERENCE


@dataclass(frozen=True)
class Ref:
    """A record or collection as a reviewer sees it: its name, linked, or the bare ID if gone."""

    id: str
    title: str
    url: str
    note: str = ""  # "archived", "collection: people", "no longer exists"


@dataclass
class Lookup:
    workspace_id: str | None
    records: dict[str, Record]
    collections: dict[str, str]

    @classmethod
    def load(
        cls,
        workspace_id: str | None,
        record_ids: Iterable[Any],
        collection_ids: Iterable[Any] = (),
    ) -> Lookup:
        """workspace_id None: IDs named by actions of several workspaces (a queue page whose
        rows the person may all see; IDs are unique across workspaces)."""
        where = {} if workspace_id is None else {"workspace_id": workspace_id}
        wanted_records = {str(i) for i in record_ids if is_valid_id(i)}
        records = {
            r.pk: r
            for r in Record.objects.filter(pk__in=wanted_records, **where).only(
                "id", "title", "data", "version", "archived_at", "collection_id"
            )
        }
        wanted_collections = {str(i) for i in collection_ids if is_valid_id(i)}
        wanted_collections |= {r.collection_id for r in records.values()}
        collections = dict(
            Collection.objects.filter(pk__in=wanted_collections, **where).values_list("id", "name")
        )
        return cls(workspace_id, records, collections)

    def record(self, record_id: Any) -> Record | None:
        return self.records.get(str(record_id))

    def title(self, record_id: Any) -> str:
        record = self.record(record_id)
        return record.title if record else str(record_id)

    def record_ref(self, record_id: Any) -> Ref:
        record = self.record(record_id)
        if record is None and isinstance(record_id, str) and REFERENCE.fullmatch(record_id):
            return Ref(record_id, f"the record {record_id} creates", "", "in this batch")
        if record is None:
            return Ref(str(record_id), str(record_id), "", "no such record now")
        where = self.collections.get(record.collection_id, "")
        note = "archived" if record.archived_at else ""
        return Ref(
            record.pk,
            record.title,
            reverse("admin:records_record_change", args=[record.pk]),
            ", ".join(n for n in (where, note) if n),
        )

    def collection_ref(self, collection_id: Any) -> Ref:
        name = self.collections.get(str(collection_id))
        if name is None:
            return Ref(str(collection_id), str(collection_id), "", "no such collection now")
        url = reverse("admin:records_collection_change", args=[collection_id])
        return Ref(str(collection_id), name, url, "collection")
