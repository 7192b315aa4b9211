"""A person's approval or rejection of a prepared write, as audit events on what it touches.

An approved write is applied under the agent's name (it prepared it, with its reasons); the
approval event beside it says which person let it through, when, and with what note, so the
record's history shows both. A rejection writes nothing else, so its event is the only trace
on the records the agent wanted to change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.utils import timezone

from records.acting import acted_by
from records.ids import is_valid_id
from records.models import AuditEvent, Record
from records.services import WriteContext, audit
from workflow.models import ActionState, PreparedAction

APPROVED = "action.approved"
REJECTED = "action.rejected"
# A waiting write found stale: in the change feed, so the agent that made it hears of it.
STALE = "action.stale"
VERBS = {APPROVED: "approved", REJECTED: "rejected", STALE: "stale"}
# Argument keys that name an existing record, at any depth (batch items, import links).
RECORD_KEYS = ("record_id", "source_id", "target_id")


def named_ids(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in RECORD_KEYS and is_valid_id(item):
                yield str(item)
            else:
                yield from named_ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from named_ids(item)


def audit_decision(action: PreparedAction, *, kind: str, reviewer: str, note: str) -> None:
    """One event per record (or, when no record is named, per collection) the write touches.
    For a stale write `reviewer` is who found it so (the stale check)."""
    if kind == APPROVED:  # everything the applied write audited
        events = AuditEvent.objects.filter(workspace_id=action.workspace_id, action_id=action.pk)
        touched = set(
            events.exclude(kind__in=list(VERBS)).values_list("record_id", "collection_id")
        )
    else:  # the existing records the unapplied write names, else the collections it touches
        named = set(named_ids(action.arguments))
        records = Record.objects.filter(workspace_id=action.workspace_id, pk__in=named)
        touched = set(records.values_list("id", "collection_id"))
        reached = {collection for _, collection in touched}
        touched |= {("", c) for c in action.collection_ids if c not in reached}
    verb = VERBS[kind]
    now = timezone.now()
    # Shaped like the approval the applied write's own events carry, so every event of an
    # approved action names its approver the same way.
    said = {f"{verb}_by": reviewer, f"{verb}_at": now.isoformat()}
    ctx = WriteContext(
        workspace_id=action.workspace_id,
        actor_id=reviewer,
        decision_reason=note or f"{verb.capitalize()} in the admin by {reviewer}.",
        review_evidence=[said],
        action_id=action.pk,
    )
    before = {"state": ActionState.AWAITING_APPROVAL, "prepared_by": acted_by(action)}
    after = {"state": action.state, "decided_by": reviewer, "operation": action.operation}
    for record_id, collection_id in sorted(touched):
        audit(
            ctx,
            kind=kind,
            entity_type="action",
            entity_id=action.pk,
            record_id=record_id,
            collection_id=collection_id,
            before=before,
            after=after,
            at=now,
        )
