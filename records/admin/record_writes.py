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
from records.services import WriteContext
from records.validation import canonical_json


def links_revision(record: Record) -> int:
    """The trigger-kept links:<record> counter; it moves whenever a link to or from it does."""
    key = links_key(record.pk)
    return counter_values(record.workspace_id, [key])[key]


def stale_message(record: Record, loaded_version: int, loaded_links: int) -> str | None:
    """Why a form loaded at (version, links revision) may not be saved now, or None if it may."""
    if record.version != loaded_version:
        event = AuditEvent.objects.filter(
            workspace_id=record.workspace_id, record_id=record.pk, after__version=record.version
        ).first()
        last = (
            f" Last change: version {record.version} by {acted_by(event)} at "
            f"{event.created_at:%Y-%m-%d %H:%M:%S} UTC."
            if event
            else ""
        )
        return (
            f"“{record.title}” changed since you opened it: it is now at version "
            f"{record.version}, your form was loaded at version {loaded_version}."
            f"{last} Nothing was saved. Reload the page to see the current "
            "state, then make your change again."
        )
    if links_revision(record) != loaded_links:
        return (
            f"The links of “{record.title}” changed since you opened it. Nothing was saved. "
            "Reload the page to see the current links, then make your change again."
        )
    return None


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
        # Locked, and refused unless still exactly what the person was looking at.
        record = services.lock_record(ctx, record_id)
        message = stale_message(record, loaded_version, loaded_links)
        if message:
            raise AnchorError(
                VERSION_CONFLICT,
                message,
                record_id=record.pk,
                current_version=record.version,
                expected_version=loaded_version,
            )
        if title != record.title:
            record = services.record_rename(
                ctx=ctx, record_id=record.pk, title=title, expected_version=record.version
            )
        # Shallow, as record_update takes them: keys added or whose value differs.
        changes = {
            key: value
            for key, value in data.items()
            if key not in record.data or canonical_json(record.data[key]) != canonical_json(value)
        }
        if changes:
            record = services.record_update(
                ctx=ctx, record_id=record.pk, changes=changes, expected_version=record.version
            )
        return record
