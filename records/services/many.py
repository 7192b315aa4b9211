"""Many new records, links between new records, and updates, written a statement per table.

Each leaves exactly what the one-at-a-time service leaves (the same rows, versions and audit
events, in order, each with its own context and time); only the statement count differs: an
import of 100 rows and 100 links was some 1,500 statements one at a time. Triggers still run
per row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from records import validation as v
from records.errors import AnchorError, not_found
from records.meaning.embeddings import embed_after_commit
from records.models import (
    AuditEvent,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
)
from records.selectors.scoped import workspace_collection
from records.selectors.serialize import aliases_by_owner, record_dict
from records.services.audit_trail import WriteContext
from records.services.record_changes import (
    check_current,
    checked_changes,
    merged_data,
    new_record_rows,
    version_rows,
)
from records.services.relationships import new_link


@dataclass(frozen=True)
class NewRecord:
    ctx: WriteContext  # who writes it and why: each record's audit event has its own
    title: Any
    data: Any


def record_create_many(*, collection_id: Any, rows: list[NewRecord]) -> list[Record]:
    """record_create for each row, in order, into one collection of the rows' workspace."""
    if not rows:
        return []
    workspace_id = rows[0].ctx.workspace_id
    checked = [(row.ctx, v.title(row.title), v.json_object("data", row.data)) for row in rows]
    with transaction.atomic():
        collection = workspace_collection(workspace_id, collection_id)
        written = [new_record_rows(ctx, collection, title, data) for ctx, title, data in checked]
        records, versions, events = (list(rows) for rows in zip(*written, strict=True))
        Record.objects.bulk_create(records)
        RecordVersion.objects.bulk_create(versions)
        AuditEvent.objects.bulk_create(events)
        embed_after_commit(workspace_id, len(records))
    return records


@dataclass(frozen=True)
class RecordUpdate:
    ctx: WriteContext
    record_id: Any
    changes: Any
    expected_version: Any


def record_update_many(updates: list[RecordUpdate]) -> list[tuple[Record, list[str]]]:
    """record_update for each, in order, of distinct records of the first one's workspace;
    each record with its aliases. The records are locked together, in ID order, and are
    written with one UPDATE; they are embedded in the background once it commits.
    A refusal is the one record_update would give, with `update_index` naming the update."""
    if not updates:
        return []
    workspace_id = updates[0].ctx.workspace_id
    ids = []
    for index, update in enumerate(updates):
        try:
            ids.append(v.record_id(update.record_id, "record_id"))
        except AnchorError as exc:
            raise _at(index, exc) from exc
    if len(set(ids)) != len(ids):
        raise ValueError("record_update_many updates distinct records; apply repeats in turn")
    with transaction.atomic():
        # By primary key alone, the workspace checked on the rows (scoped.values_by_id).
        locked = {
            record.pk: record
            for record in Record.objects.select_for_update().filter(pk__in=ids).order_by("pk")
            if record.workspace_id == workspace_id
        }
        aliases = aliases_by_owner(RecordAlias.objects.filter(record_id__in=ids), "record_id")
        now = timezone.now()
        written: list[tuple[Record, list[str]]] = []
        versions, events = [], []
        for index, (update, record_id) in enumerate(zip(updates, ids, strict=True)):
            try:
                changes = checked_changes(update.changes)
                record = locked.get(record_id)
                if record is None:
                    raise not_found("record", record_id, "record_id")
                check_current(record, update.expected_version, "changing data")
                merged = merged_data(record, changes)
            except AnchorError as exc:
                raise _at(index, exc) from exc
            before = record_dict(record, view="state", aliases=aliases[record_id])
            record.data, record.version, record.updated_at = merged, record.version + 1, now
            version, event = version_rows(
                update.ctx,
                record,
                kind="record.updated",
                before=before,
                aliases=aliases[record_id],
                at=now,
            )
            versions.append(version)
            events.append(event)
            written.append((record, aliases[record_id]))
        _save_updated([record for record, _ in written])
        RecordVersion.objects.bulk_create(versions)
        AuditEvent.objects.bulk_create(events)
        embed_after_commit(workspace_id, len(written))
    return written


def _save_updated(records: list[Record]) -> None:
    """One prepared UPDATE run for every record (bulk_update's CASE over each row costs more
    to build than the statements take to run)."""
    data, updated_at = Record._meta.get_field("data"), Record._meta.get_field("updated_at")
    rows = [
        (
            data.get_db_prep_save(record.data, connection),
            record.version,
            updated_at.get_db_prep_save(record.updated_at, connection),
            record.pk,
        )
        for record in records
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE records_record SET data = %s, version = %s, updated_at = %s WHERE id = %s",
            rows,
        )


def _at(index: int, exc: AnchorError) -> AnchorError:
    return AnchorError(exc.code, exc.message, **exc.details, update_index=index)


@dataclass(frozen=True)
class NewLink:
    ctx: WriteContext
    source: Record  # records this transaction created: active, and linked to nothing yet
    relationship_type: Any
    target: Record


def can_link_many(links: list[NewLink]) -> bool:
    """Whether relationship_create_many applies: no link to itself, and no pair twice (each of
    those needs relationship_create's own answer)."""
    seen = set()
    for link in links:
        key = (link.source.pk, link.relationship_type, link.target.pk)
        if link.source.pk == link.target.pk or key in seen:
            return False
        seen.add(key)
    return True


def relationship_create_many(links: list[NewLink]) -> list[Relationship]:
    """relationship_create for each link between new records (see can_link_many), in order."""
    if not can_link_many(links):
        raise ValueError("relationship_create_many needs distinct links between two records")
    checked = [(link, v.relationship_type(link.relationship_type)) for link in links]
    relationships, events = [], []
    for link, relationship_type in checked:
        rel, event = new_link(link.ctx, link.source, relationship_type, link.target, timezone.now())
        relationships.append(rel)
        events.append(event)
    with transaction.atomic():
        Relationship.objects.bulk_create(relationships)
        AuditEvent.objects.bulk_create(events)
    return relationships
