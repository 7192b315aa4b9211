"""A person's edit of a record, applied through the services against the state they loaded (the
version and links revision the form carries), under the record's row lock inside the change
view's transaction: any refusal rolls the whole save back."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from records import approval, services
from records.acting import acted_by
from records.approval import Touched
from records.counters import counter_values, links_key
from records.errors import VERSION_CONFLICT, AnchorError
from records.models import AuditEvent, Record
from records.selectors import in_workspace
from records.services import WriteContext
from records.validation import canonical_json


def links_revision(record: Record) -> int:
    """The trigger-kept links:<record> counter; it moves whenever a link to or from it does."""
    key = links_key(record.pk)
    return counter_values(record.workspace_id, [key])[key]


def last_change(record: Record) -> str:
    event = AuditEvent.objects.filter(
        workspace_id=record.workspace_id, record_id=record.pk, after__version=record.version
    ).first()
    if event is None:
        return ""
    return (
        f" Last change: version {record.version} by {acted_by(event)} at "
        f"{event.created_at:%Y-%m-%d %H:%M:%S} UTC."
    )


def stale_message(record: Record, loaded_version: int, loaded_links: int) -> str | None:
    """Why a form loaded at (version, links revision) may not be saved now, or None if it may."""
    if record.version != loaded_version:
        return (
            f"“{record.title}” changed since you opened it: it is now at version "
            f"{record.version}, your form was loaded at version {loaded_version}."
            f"{last_change(record)} Nothing was saved. Reload the page to see the current "
            "state, then make your change again."
        )
    if links_revision(record) != loaded_links:
        return (
            f"The links of “{record.title}” changed since you opened it. Nothing was saved. "
            "Reload the page to see the current links, then make your change again."
        )
    return None


def lock_loaded_state(
    ctx: WriteContext, record_id: str, loaded_version: int, loaded_links: int
) -> Record:
    """Lock the record and refuse unless it is still exactly what the person was looking at."""
    record = in_workspace(
        Record.objects.select_for_update(),
        workspace_id=ctx.workspace_id,
        pk=record_id,
        kind="record",
    )
    message = stale_message(record, loaded_version, loaded_links)
    if message:
        raise AnchorError(
            VERSION_CONFLICT,
            message,
            record_id=record.pk,
            current_version=record.version,
            expected_version=loaded_version,
        )
    return record


def data_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The shallow changes record_update needs: keys added or whose value differs."""
    return {
        key: value
        for key, value in after.items()
        if key not in before or canonical_json(before[key]) != canonical_json(value)
    }


def admit_person_write(ctx: WriteContext, touched: Touched) -> None:
    """The approval gate every door calls: a person's own edit is the approval, so it applies,
    and the gates it touches are held steady until the edit lands (records.approval)."""
    collections = approval.collections_touched(ctx.workspace_id, touched)
    decision = approval.decide(ctx.workspace_id, collections, actor=approval.PERSON)
    assert not decision.hold, "a person's write is never held for approval"


def record_edit_apply(
    *,
    ctx: WriteContext,
    record_id: str,
    loaded_version: int,
    loaded_links: int,
    title: str,
    data: dict[str, Any],
) -> Record:
    """Rename and/or update, each its own audited version, chained on the version it made."""
    with transaction.atomic():
        admit_person_write(ctx, Touched.of(records=[record_id]))
        record = lock_loaded_state(ctx, record_id, loaded_version, loaded_links)
        if title != record.title:
            record = services.record_rename(
                ctx=ctx, record_id=record.pk, title=title, expected_version=record.version
            )
        changes = data_changes(record.data, data)
        if changes:
            record = services.record_update(
                ctx=ctx, record_id=record.pk, changes=changes, expected_version=record.version
            )
        return record


def record_alias_rows_apply(
    *, ctx: WriteContext, record: Record, rows: list[tuple[str | None, str | None]]
) -> Record:
    """Each row is (alias as loaded, alias as submitted), as common.alias_rows reads them."""
    with transaction.atomic():
        admit_person_write(ctx, Touched.of(records=[record.pk]))
        for original, wanted in rows:
            if original and original != wanted:
                record = services.record_alias_remove(
                    ctx=ctx, record_id=record.pk, alias=original, expected_version=record.version
                )
            if wanted and wanted != original:
                record = services.record_alias_add(
                    ctx=ctx, record_id=record.pk, alias=wanted, expected_version=record.version
                )
        return record


def record_link_rows_apply(
    *,
    ctx: WriteContext,
    record: Record,
    removed: list[str],
    added: list[tuple[str, str]],
) -> None:
    """Remove relationships by id, then add (relationship_type, target_id) from this record."""
    with transaction.atomic():
        admit_person_write(
            ctx,
            Touched.of(
                records=[record.pk, *(target for _, target in added)], relationships=removed
            ),
        )
        for relationship_id in removed:
            services.relationship_delete(ctx=ctx, relationship_id=relationship_id)
        for relationship_type, target_id in added:
            services.relationship_create(
                ctx=ctx,
                source_id=record.pk,
                relationship_type=relationship_type,
                target_id=target_id,
            )
