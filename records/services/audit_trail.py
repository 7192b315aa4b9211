"""Who writes, and the audit event every mutation writes in its own transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from records.models import AuditEvent, Workspace


@dataclass(frozen=True)
class WriteContext:
    """Who writes, where, and why. Clarification is what the agent reports the user said.
    Over HTTP the credential the agent acts through for actor_id (records.acting)."""

    workspace_id: str
    actor_id: str
    credential: str | None = None
    credential_name: str | None = None
    decision_reason: str = ""
    clarification: str = ""
    review_evidence: list[Any] = field(default_factory=list)
    action_id: str = ""
    item_index: int | None = None


# The record IDs audited since the innermost `written_records` began, in this context.
_written: ContextVar[set[str] | None] = ContextVar("written_records", default=None)


@contextmanager
def written_records() -> Iterator[set[str]]:
    """Collect the IDs of the records audited inside the block: what a caller keeping its own
    copy of names must refresh, known without reading the audit log back."""
    collected: set[str] = set()
    token = _written.set(collected)
    try:
        yield collected
    finally:
        _written.reset(token)


def workspace_ensure(workspace_id: str) -> Workspace:
    workspace, _ = Workspace.objects.get_or_create(id=workspace_id)
    return workspace


def audit(ctx: WriteContext, *, at: datetime | None = None, **fields: Any) -> AuditEvent:
    """Write the event `audit_event` builds (same keyword arguments; `at` now by default)."""
    event = audit_event(ctx, at=at or timezone.now(), **fields)
    event.save(force_insert=True)
    return event


def audit_event(
    ctx: WriteContext,
    *,
    kind: str,
    entity_type: str,
    entity_id: str,
    record_id: str = "",
    collection_id: str = "",
    before: Any = None,
    after: Any = None,
    at: datetime,
) -> AuditEvent:
    """The event `audit` writes, not yet saved: bulk writers insert many in one statement."""
    collecting = _written.get()
    if collecting is not None and record_id:
        collecting.add(record_id)
    return AuditEvent(
        workspace_id=ctx.workspace_id,
        actor_id=ctx.actor_id,
        credential=ctx.credential,
        credential_name=ctx.credential_name,
        kind=kind,
        entity_type=entity_type,
        entity_id=entity_id,
        record_id=record_id,
        collection_id=collection_id,
        before=before,
        after=after,
        decision_reason=ctx.decision_reason,
        agent_reported_clarification=ctx.clarification,
        review_evidence=ctx.review_evidence,
        action_id=ctx.action_id,
        item_index=ctx.item_index,
        created_at=at,
    )
