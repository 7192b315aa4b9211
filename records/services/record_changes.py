"""Records: creation, and every change to one, through a single versioned, audited sequence."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from records import validation as v
from records.errors import VERSION_CONFLICT, AnchorError, invalid
from records.meaning.embeddings import embed_written
from records.models import AuditEvent, Collection, Record, RecordVersion
from records.selectors.scoped import check_active, in_workspace, workspace_collection
from records.selectors.serialize import record_dict
from records.services.audit_trail import WriteContext, audit_event
from records.services.collections import alias_add, alias_remove

# --- the locked, current record ---------------------------------------------------------------


def lock_record(ctx: WriteContext, record_id: Any, field: str = "record_id") -> Record:
    return in_workspace(
        Record.objects.select_for_update(),
        workspace_id=ctx.workspace_id,
        pk=v.record_id(record_id, field),
        kind="record",
        field=field,
    )


def lock_records(ctx: WriteContext, record_ids: Iterable[Any]) -> None:
    """Lock these records of the workspace (those that exist) in one canonical order, by ID,
    before a write that changes several: two writers each taking them one by one in its own
    order (a batch's items, a link's ends) could each hold what the other waits for. SQLite
    needs none: its write transactions run one at a time."""
    ids = sorted({str(i) for i in record_ids if isinstance(i, str)})
    if ids and connection.features.has_select_for_update:
        locking = Record.objects.select_for_update().filter(workspace_id=ctx.workspace_id)
        list(locking.filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))


def check_current(record: Record, expected_version: Any, doing: str | None) -> None:
    """Refuse a stale expected version of the locked record, then (unless `doing` is None, for
    changes allowed on archived records) an archived record. The order fixes which error wins."""
    expected = v.expected_version(expected_version)
    if record.version != expected:
        raise AnchorError(
            VERSION_CONFLICT,
            f"Record {record.pk} is at version {record.version}, not {expected}. Read it again "
            "with get_record_context and reconsider the change against its current state.",
            record_id=record.pk,
            current_version=record.version,
            expected_version=expected,
        )
    if doing is not None:
        check_active(record, doing)


# --- the sequence ------------------------------------------------------------------------------

# What a change makes of a record: the Record columns that change with their values, and its
# aliases after (a change that writes alias rows names them: the sequence never reads one just
# written).
Changed = tuple[dict[str, Any], list[str]]
# Validates against the locked record and its aliases (raising AnchorError to refuse) and says
# what changes; it may write alias rows but leaves the record itself to the sequence.
ChangeFn = Callable[[Record, list[str], datetime], Changed]


def record_change(
    ctx: WriteContext,
    record_id: Any,
    expected_version: Any,
    doing: str | None,
    kind: str,
    change: ChangeFn,
) -> Record:
    """The one sequence every change to a record goes through, in one transaction: lock it,
    check it (check_current), let `change` decide, then save the next version with its
    RecordVersion row and one audit event of `kind`, all stamped with one time, and keep the
    record's embedding current in the same transaction."""
    with transaction.atomic():
        record = lock_record(ctx, record_id)
        check_current(record, expected_version, doing)
        now = timezone.now()
        aliases = sorted(record.aliases.values_list("alias", flat=True))
        before = record_dict(record, view="state", aliases=aliases)
        fields, aliases_after = change(record, aliases, now)
        for name, value in fields.items():
            setattr(record, name, value)
        record.version += 1
        record.updated_at = now
        record.save(update_fields=[*fields, "version", "updated_at"])
        version, event = version_rows(
            ctx, record, kind=kind, before=before, aliases=aliases_after, at=now
        )
        version.save(force_insert=True)
        event.save(force_insert=True)
        embed_written(record, content_changed=bool({"title", "data"} & fields.keys()))
        return record


def version_rows(
    ctx: WriteContext,
    record: Record,
    *,
    kind: str,
    before: dict[str, Any] | None,
    aliases: list[str],
    at: datetime,
) -> tuple[RecordVersion, AuditEvent]:
    """The version row and audit event, not yet saved, of a write that brought `record` to its
    version: the sequence saves one pair, bulk writers many."""
    version = RecordVersion(
        record=record,
        version=record.version,
        title=record.title,
        data=record.data,
        aliases=aliases,
        archived_at=record.archived_at,
        actor_id=ctx.actor_id,
        recorded_at=at,
    )
    event = audit_event(
        ctx,
        kind=kind,
        entity_type="record",
        entity_id=record.pk,
        record_id=record.pk,
        collection_id=record.collection_id,
        before=before,
        after=record_dict(record, view="state", aliases=aliases),
        at=at,
    )
    return version, event


# --- the mutations -----------------------------------------------------------------------------


def record_create(*, ctx: WriteContext, collection_id: Any, title: Any, data: Any) -> Record:
    title_text = v.title(title)
    data_obj = v.json_object("data", data)
    with transaction.atomic():
        collection = workspace_collection(ctx.workspace_id, collection_id)
        record, version, event = new_record_rows(ctx, collection, title_text, data_obj)
        record.save(force_insert=True)
        version.save(force_insert=True)
        event.save(force_insert=True)
        embed_written(record, content_changed=True)
        return record


def new_record_rows(
    ctx: WriteContext, collection: Collection, title: str, data: dict[str, Any]
) -> tuple[Record, RecordVersion, AuditEvent]:
    """A new record (checked title and data), its first version and its creation event, all
    stamped with one time and not yet saved: record_create saves one, bulk writers many."""
    now = timezone.now()
    record = Record(
        workspace_id=ctx.workspace_id,
        collection=collection,
        title=title,
        data=data,
        version=1,
        created_by=ctx.actor_id,
        created_at=now,
        updated_at=now,
    )
    return record, *version_rows(
        ctx, record, kind="record.created", before=None, aliases=[], at=now
    )


def checked_changes(changes: Any) -> dict[str, Any]:
    changes_obj = v.json_object("changes", changes)
    if not changes_obj:
        raise invalid("changes", "is empty; name at least one field to change.")
    return changes_obj


def merged_data(record: Record, changes: dict[str, Any]) -> dict[str, Any]:
    """The record's data with the changes' top-level keys replaced. The merged record must fit
    too; the error says it is the merge, not the changes, that is too big (both parts are
    valid JSON already)."""
    merged = {**record.data, **changes}
    size = len(v.canonical_json(merged).encode("utf-8"))
    if size > v.MAX_DATA_BYTES:
        current = len(v.canonical_json(record.data).encode("utf-8"))
        raise invalid(
            "changes",
            f"merged into the record's current data ({current} bytes) they make a record of "
            f"{size} bytes as canonical JSON; the limit is {v.MAX_DATA_BYTES}. Store less, "
            "replace large fields instead of adding to them, or split the data across linked "
            "records.",
            merged_size=size,
            current_size=current,
            limit=v.MAX_DATA_BYTES,
        )
    return merged


def record_update(
    *, ctx: WriteContext, record_id: Any, changes: Any, expected_version: Any
) -> Record:
    """Shallow merge: omitted keys stay, explicit null is stored, nested objects are replaced."""
    changes_obj = checked_changes(changes)

    def merge(record: Record, aliases: list[str], now: datetime) -> Changed:
        return {"data": merged_data(record, changes_obj)}, aliases

    return record_change(ctx, record_id, expected_version, "changing data", "record.updated", merge)


def record_rename(
    *, ctx: WriteContext, record_id: Any, title: Any, expected_version: Any
) -> Record:
    title_text = v.title(title)

    def rename(record: Record, aliases: list[str], now: datetime) -> Changed:
        if title_text == record.title:
            raise invalid("title", "is the record's current title; nothing would change.")
        return {"title": title_text}, aliases

    return record_change(ctx, record_id, expected_version, "renaming", "record.renamed", rename)


def record_archive(*, ctx: WriteContext, record_id: Any, expected_version: Any) -> Record:
    def archive(record: Record, aliases: list[str], now: datetime) -> Changed:
        return {"archived_at": now}, aliases

    return record_change(
        ctx, record_id, expected_version, "archiving again", "record.archived", archive
    )


def record_alias_add(
    *, ctx: WriteContext, record_id: Any, alias: Any, expected_version: Any
) -> Record:
    alias_text = v.title(alias, "alias")

    def add(record: Record, aliases: list[str], now: datetime) -> Changed:
        alias_add(ctx, record, alias_text, count=len(aliases), now=now)
        return {}, sorted([*aliases, alias_text])

    return record_change(
        ctx, record_id, expected_version, "adding an alias", "record.alias_added", add
    )


def record_alias_remove(
    *, ctx: WriteContext, record_id: Any, alias: Any, expected_version: Any
) -> Record:
    """Unlike the other changes, allowed on an archived record."""
    alias_text = v.title(alias, "alias")

    def remove(record: Record, aliases: list[str], now: datetime) -> Changed:
        removed = alias_remove(record, alias_text)
        return {}, [a for a in aliases if a != removed]

    return record_change(ctx, record_id, expected_version, None, "record.alias_removed", remove)
