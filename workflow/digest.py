"""workspace_digest: the first call of a conversation, everything needed to orient in one read."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from records.models import AuditEvent, Collection, Record, SelfMapping
from workflow.agendas.reads import open_agendas
from workflow.models import PreparedAction
from workflow.scope import Scope

RECENT_EVENTS = 10
RECENT_RECORDS = 10
MAX_COLLECTIONS = 50
OPEN_ACTIONS = 20


def workspace_digest(scope: Scope) -> dict[str, Any]:
    ws = scope.workspace_id
    collections = list(
        Collection.objects.filter(workspace_id=ws)
        .annotate(active=Count("records", filter=Q(records__archived_at__isnull=True)))
        .order_by("name")
        .values("id", "name", "purpose", "active", "requires_approval")[: MAX_COLLECTIONS + 1]
    )
    mapping = (
        SelfMapping.objects.filter(workspace_id=ws, actor_id=scope.actor_id)
        .select_related("record")
        .first()
    )
    recent = AuditEvent.objects.filter(workspace_id=ws).order_by("-created_at", "-id")[
        :RECENT_EVENTS
    ]
    pending = PreparedAction.objects.filter(workspace_id=ws)
    recently_changed = (
        Record.objects.filter(workspace_id=ws)
        .select_related("collection")
        .order_by("-updated_at", "-id")[:RECENT_RECORDS]
    )
    open_actions = pending.filter(
        actor_id=scope.actor_id, state=PreparedAction.PREPARED, expires_at__gt=timezone.now()
    ).order_by("-created_at")[:OPEN_ACTIONS]
    agendas = open_agendas(scope)
    return {
        "workspace_id": ws,
        "actor_id": scope.actor_id,
        # Lists being worked through item by item: resume one with agenda_view agenda_id=...
        "open_agendas": agendas["agendas"],
        "open_agendas_truncated": agendas["truncated"],
        "collections": [
            {
                "collection_id": c["id"],
                "name": c["name"],
                "purpose": c["purpose"],
                "active_record_count": c["active"],
                "requires_human_approval": c["requires_approval"],
            }
            for c in collections[:MAX_COLLECTIONS]
        ],
        "collections_truncated": len(collections) > MAX_COLLECTIONS,
        "active_record_count": Record.objects.filter(
            workspace_id=ws, archived_at__isnull=True
        ).count(),
        "self_mapping": (
            {"record_id": mapping.record_id, "title": mapping.record.title} if mapping else None
        ),
        "awaiting_human_approval": pending.filter(state=PreparedAction.AWAITING_APPROVAL).count(),
        "your_actions_awaiting_approval": list(
            pending.filter(
                state=PreparedAction.AWAITING_APPROVAL, actor_id=scope.actor_id
            ).values_list("id", flat=True)[:20]
        ),
        "recently_changed_records": [
            {
                "record_id": r.pk,
                "title": r.title,
                "collection": r.collection.name,
                "version": r.version,
                "updated_at": r.updated_at.isoformat(),
                "archived": r.archived_at is not None,
            }
            for r in recently_changed
        ],
        "your_open_prepared_actions": [
            {"action_id": a.pk, "operation": a.operation, "expires_at": a.expires_at.isoformat()}
            for a in open_actions
        ],
        "recent_changes": [
            {
                "kind": e.kind,
                "entity_type": e.entity_type,
                "entity_id": e.entity_id,
                "actor_id": e.actor_id,
                "at": e.created_at.isoformat(),
                "reason": e.decision_reason,
            }
            for e in recent
        ],
    }
