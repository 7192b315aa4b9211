"""workspace_digest: the first call of a conversation, everything needed to orient in one read.

Small because the agent reads it every time (about 1,100 tokens on ten collections of 50
records, 540 on the hiring demo): collections with their typical fields and link types, agendas,
writes awaiting a person, the latest runs of changes a line each. A fixed number of queries.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import Count
from django.utils import timezone

from records.acting import acted_by
from records.models import AuditEvent, Collection, Relationship, SelfMapping
from records.selectors.active_counts import active_counts
from records.selectors.changes import TITLES_SHOWN, minute, records_and_names, runs
from workflow import change_feed
from workflow.agendas.reads import open_agendas, unsynced_agendas
from workflow.models import ActionState, PreparedAction
from workflow.scope import Scope

ALWAYS_SAID = {"collections", "recent_changes", "unread_changes", "unread_changes_capped"}
RECENT_RUNS = 8  # the latest runs of one actor with one reason, a line each
RUN_SCAN = 1000  # events read to count them (a longer run counts its newest 1,000)
MAX_COLLECTIONS = 50
MAX_LINK_TYPES = 8
OPEN_ACTIONS = 20
NOT_APPLIED = 20  # the oldest untold first; the rest in the next digest
RECENCY_NOTE = "Recent is not referenced: resolve every name the user mentions."
SYNC_STEP = "Outcomes not yet on their records: agenda_view, then agenda_sync_records."
AGENDA_TOOLS_UNSERVED = (
    "Agenda tools are opt-in: serve them with ANCHOR_TOOLS=full (or mcp_serve --tools full) to "
    "continue this agenda; a person can see it in the admin meanwhile."
)


def workspace_digest(scope: Scope, *, agenda_tools: bool = True) -> dict[str, Any]:
    """`agenda_tools`: whether this server offers them; if not, no step names one."""
    ws = scope.workspace_id
    collections = list(
        Collection.objects.filter(workspace_id=ws)
        .order_by("name")
        .values("id", "name", "purpose", "typical_fields", "requires_approval")[
            : MAX_COLLECTIONS + 1
        ]
    )
    counts = active_counts(ws, (c["id"] for c in collections[:MAX_COLLECTIONS]))
    link_types = _link_types_by_collection(ws)
    mapping = (
        SelfMapping.objects.filter(workspace_id=ws, actor_id=scope.actor_id)
        .select_related("record")
        .first()
    )
    pending = PreparedAction.objects.filter(workspace_id=ws)
    open_actions = pending.filter(
        actor_id=scope.actor_id, state=ActionState.PREPARED, expires_at__gt=timezone.now()
    ).order_by("-created_at")[:OPEN_ACTIONS]
    agendas = open_agendas(scope)
    unsynced = unsynced_agendas(scope)
    sync_step = SYNC_STEP if agenda_tools else AGENDA_TOOLS_UNSERVED
    digest = {
        # Lists being worked through item by item: resume one with agenda_view agenda_id=...
        "open_agendas": [
            a if agenda_tools else a | {"next_step": AGENDA_TOOLS_UNSERVED}
            for a in agendas["agendas"]
        ],
        "open_agendas_truncated": agendas["truncated"],
        "unsynced_agendas": unsynced["agendas"],
        "unsynced_agendas_truncated": unsynced["truncated"],
        "unsynced_agendas_next_step": sync_step if unsynced["agendas"] else None,
        "collections": [
            {
                "collection_id": c["id"],
                "name": c["name"],
                "purpose": c["purpose"],
                "active_record_count": counts[c["id"]],
                "typical_fields": c["typical_fields"],
                "link_types": link_types.get(c["id"], []),
                **({"requires_human_approval": True} if c["requires_approval"] else {}),
            }
            for c in collections[:MAX_COLLECTIONS]
        ],
        "collections_truncated": len(collections) > MAX_COLLECTIONS,
        "self_mapping": (
            {"record_id": mapping.record_id, "title": mapping.record.title} if mapping else None
        ),
        "awaiting_human_approval": pending.filter(state=ActionState.AWAITING_APPROVAL).count(),
        "your_actions_awaiting_approval": list(
            pending.filter(
                state=ActionState.AWAITING_APPROVAL, actor_id=scope.actor_id
            ).values_list("id", flat=True)[:20]
        ),
        "your_writes_not_applied": _not_applied(scope),
        "your_open_prepared_actions": [
            {"action_id": a.pk, "operation": a.operation, "expires_at": a.expires_at.isoformat()}
            for a in open_actions
        ],
        "recent_changes": _recent_changes(ws),
        "recent_changes_note": RECENCY_NOTE,
        # Catching up: list_changes since_last_read=true, or later with this cursor.
        **change_feed.catching_up(scope),
    }
    # Said only when they say something (to keep it small): an empty list, a zero or a false
    # flag is left out.
    return {k: v for k, v in digest.items() if k in ALWAYS_SAID or v not in (None, 0, False, [])}


def _not_applied(scope: Scope) -> list[dict[str, Any]]:
    """This agent's writes a person rejected or that went stale, each told once (here, or in
    the reply to its own commit)."""
    shown = (
        PreparedAction.objects.filter(
            workspace_id=scope.workspace_id,
            actor_id=scope.actor_id,
            state__in=[ActionState.REJECTED, ActionState.STALE],
            agent_told_at__isnull=True,
        )
        .order_by("decided_at")
        .only("operation", "state", "decision_note", "stale_reason")[:NOT_APPLIED]
    )
    told = [
        {
            "action_id": action.pk,
            "operation": action.operation,
            "state": action.state,
            "why": action.decision_note or action.stale_reason,
        }
        for action in shown
    ]
    if told:
        PreparedAction.objects.filter(pk__in=[t["action_id"] for t in told]).update(
            agent_told_at=timezone.now()
        )
    return told


def _link_types_by_collection(workspace_id: str) -> dict[str, list[str]]:
    """The relationship types each collection's records link out with, most used first."""
    rows = (
        Relationship.objects.filter(workspace_id=workspace_id)
        .values("source__collection_id", "relationship_type")
        .annotate(uses=Count("id"))
        .order_by("source__collection_id", "-uses", "relationship_type")
    )
    found: dict[str, list[str]] = {}
    for row in rows:
        types = found.setdefault(row["source__collection_id"], [])
        if len(types) < MAX_LINK_TYPES:
            types.append(row["relationship_type"])
    return found


def _recent_changes(workspace_id: str) -> list[str]:
    """One line per run (one actor, one reason: an import is one line), newest first, by
    title or collection name and without IDs: recent is not a reference (the note), and
    list_changes gives IDs, reasons and paths when they are wanted."""
    events = list(
        AuditEvent.objects.filter(workspace_id=workspace_id)
        .order_by("-created_at", "-id")
        .defer("before", "after", "review_evidence")[:RUN_SCAN]
    )
    shown = runs(events)[:RECENT_RUNS]
    records, names = records_and_names(workspace_id, [e for r in shown for e in r], ends=False)
    lines = []
    for run in shown:
        kinds = Counter(e.kind for e in run)
        said = dict.fromkeys(
            (
                records.get(e.record_id, {}).get("title")
                if e.record_id
                else names.get(e.collection_id)
            )
            or e.entity_type
            for e in run
        )
        what = ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in kinds.items())
        about = ", ".join(list(said)[:TITLES_SHOWN])
        if len(said) > TITLES_SHOWN:
            about += f" and {len(said) - TITLES_SHOWN} more"
        lines.append(f"{minute(run[0].created_at)} {acted_by(run[0])} {what}: {about}")
    return lines
