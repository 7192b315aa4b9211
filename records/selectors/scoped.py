"""Rows of a workspace by ID, and whether a record may still change.

A row of another workspace is as absent as one that never existed (the same NOT_FOUND).
Archived records refuse every change but those that repair them (removing an alias or a link)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from django.db.models import QuerySet

from records.errors import ARCHIVED, AnchorError, not_found
from records.models import Collection, Record
from records.selectors.serialize import iso
from records.validation import entity_id

Row = TypeVar("Row", covariant=True)


class Rows(Protocol[Row]):
    """A manager or queryset (locked, narrowed to some columns, joined) to look a row up in."""

    def filter(self, *args: Any, **kwargs: Any) -> QuerySet[Any, Row]: ...


def in_workspace(
    rows: Rows[Row], *, workspace_id: str, pk: Any, kind: str, field: str | None = None
) -> Row:
    """The row `pk` of `rows` in the workspace, or NOT_FOUND naming the argument (`field`,
    by default `<kind>_id`), the kind and the ID."""
    row = rows.filter(workspace_id=workspace_id, pk=pk).first()
    if row is None:
        raise not_found(kind, pk, field)
    return row


def workspace_collection(
    workspace_id: str, collection_id: Any, *, lock: bool = False
) -> Collection:
    """The collection `collection_id` of the workspace (with lock, locked until the transaction
    ends), or NOT_FOUND naming collection_id."""
    rows = Collection.objects.select_for_update() if lock else Collection.objects
    pk = entity_id(collection_id, "collection_id")
    return in_workspace(rows, workspace_id=workspace_id, pk=pk, kind="collection")


def collection_checked(workspace_id: str, collection_id: Any) -> str | None:
    """An optional collection_id argument, refused unless a collection of the workspace has it."""
    if collection_id is None:
        return None
    checked = entity_id(collection_id, "collection_id")
    rows = Collection.objects.values("pk")
    in_workspace(rows, workspace_id=workspace_id, pk=checked, kind="collection")
    return checked


def values_by_id(
    rows: Rows[Any], *, workspace_id: str, ids: Iterable[Any], fields: Sequence[str]
) -> list[dict[str, Any]]:
    """`fields` of the rows with these IDs that belong to the workspace (any other is absent).
    By primary key alone, the workspace checked on the rows: given both, SQLite without
    statistics walked the workspace's whole index (a third of a second at a million records)."""
    wanted = list(ids)
    if not wanted:
        return []
    return [
        {field: row[field] for field in fields}
        for row in rows.filter(pk__in=wanted).values("workspace_id", *fields)
        if row["workspace_id"] == workspace_id
    ]


def check_active(record: Record, doing: str, *, field: str | None = None) -> None:
    """Refuse `doing` on an archived record; `doing` names the change ("linking", "renaming").
    `field` names the argument that held the record, when one of several did (`record_ids[2]`).
    """
    if record.archived_at is not None:
        named = {"field": field} if field else {}
        raise AnchorError(
            ARCHIVED,
            f"{field + ': ' if field else ''}Record {record.pk} ({record.title!r}) is archived; "
            f"{doing} is not allowed on archived records.",
            record_id=record.pk,
            archived_at=iso(record.archived_at),
            **named,
        )
