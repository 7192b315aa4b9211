"""The workflow where a person already is: held writes on the record they would change and on
the admin index, with the stale ones no person has seen and the agendas still open or unsynced.
Registered with records.admin.common (the store does not import us), the queue first.

Pending writes are found in one query and checked for staleness first, so a write that can no
longer apply says so here instead of waiting for someone to press Approve.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from records.admin.common import panel
from records.admin.scoping import member_workspace_ids, reachable, sees_several_workspaces
from workflow.action_kinds import kind_of
from workflow.actions import mark_stale_pending, needing_attention
from workflow.admin.action_review import names_any
from workflow.admin.agendas import OPEN, UNSYNCED
from workflow.admin.changes import queue_rows, state_badge, summarise
from workflow.models import ActionState, PreparedAction
from workflow.models.agendas import Agenda
from workflow.operations import operation_named, operation_names

DASHBOARD_LIMIT = 10
RECORD_LIMIT = 20


def _render(template: str, request: HttpRequest, **context: Any) -> SafeString:
    return mark_safe(render_to_string(template, context, request=request))


def _on_dashboard(
    request: HttpRequest, template: str, shown: list[Any], total: int, list_url: str, **extra: Any
) -> SafeString:
    """A list on the index: its first rows, how many more there are, and where they are."""
    return _render(
        template,
        request,
        shown=shown,
        total=total,
        more=total - len(shown),
        list_url=list_url,
        several_workspaces=sees_several_workspaces(request),
        here=request.get_full_path(),
        **extra,
    )


def _drawn(actions: list[Any]) -> list[Any]:
    """Actions as a panel draws them: the queue's one-line summary, a state badge, their links."""
    summarise(actions)
    for action in actions:
        action.badge = state_badge(action.state)
        action.url = reverse("admin:workflow_preparedaction_change", args=[action.pk])
        action.dismiss_url = reverse("admin:workflow_preparedaction_dismiss", args=[action.pk])
    return actions


def _listed(rows: QuerySet[PreparedAction], limit: int) -> list[Any]:
    """Final writes, drawn like the queue's rows (nothing to re-check: they cannot move)."""
    return _drawn(list(queue_rows(rows).order_by("-decided_at", "-created_at")[:limit]))


def _still_waiting(waiting: QuerySet[PreparedAction], limit: int) -> list[Any]:
    """The newest waiting writes, each checked for staleness first: those found stale go."""
    found = list(waiting.order_by("-created_at").values_list("pk", "workspace_id")[:limit])
    by_workspace: dict[str, list[str]] = {}
    for pk, workspace_id in found:
        by_workspace.setdefault(workspace_id, []).append(pk)
    for workspace_id, ids in by_workspace.items():
        mark_stale_pending(workspace_id, ids)
    still = waiting.filter(pk__in=[pk for pk, _ in found])
    return _drawn(list(queue_rows(still).order_by("-created_at")))


@panel("record")
def pending_on_record(request: HttpRequest, record: Any) -> SafeString:
    naming = PreparedAction.objects.filter(workspace_id=record.workspace_id).filter(
        names_any([record.pk])
    )
    waiting = naming.filter(state=ActionState.AWAITING_APPROVAL)
    return _render(
        "admin/workflow/pending_on_record.html",
        request,
        actions=_still_waiting(waiting, RECORD_LIMIT),
        # Found stale just now, or earlier and not yet seen by a person.
        attention=_listed(
            naming.filter(state=ActionState.STALE, dismissed_at__isnull=True), RECORD_LIMIT
        ),
        here=request.get_full_path(),
    )


def _keys_it_sets(operation: str, arguments: Any, record_id: str) -> list[str]:
    """The data keys a single pending update of this record sets: approval re-checks only
    those (its operation's `rebase`), so a save that leaves them alone leaves it applicable."""
    if operation not in operation_names() or not isinstance(arguments, dict):
        return []  # a batch, an import, or a stored action of an operation since retired
    op = operation_named(operation)
    if op.written_keys is None or arguments.get("record_id") != record_id:
        return []
    return op.written_keys(arguments)


@panel("record_edit")
def pending_on_edit(request: HttpRequest, record: Any) -> SafeString:
    """On the edit form: the held writes on this record, and which a save would make stale."""
    waiting = PreparedAction.objects.filter(
        workspace_id=record.workspace_id, state=ActionState.AWAITING_APPROVAL
    ).filter(names_any([record.pk]))
    shown: list[Any] = list(queue_rows(waiting).order_by("-created_at")[:RECORD_LIMIT])
    if not shown:
        return mark_safe("")
    arguments = dict(
        PreparedAction.objects.filter(pk__in=[a.pk for a in shown]).values_list("pk", "arguments")
    )
    for action in _drawn(shown):
        args = arguments.get(action.pk)
        action.sets_keys = _keys_it_sets(action.operation, args, record.pk)
        # Checked against the record's exact version (a rename, an alias, an archival, an
        # update inside a batch): any save of the record makes it stale.
        action.goes_stale = not action.sets_keys and kind_of(action.operation).pins_version(
            args, record.pk
        )
    return _render("admin/workflow/pending_on_edit.html", request, actions=shown, record=record)


@panel("dashboard")
def queue_on_dashboard(request: HttpRequest) -> SafeString:
    waiting = reachable(request, PreparedAction).filter(state=ActionState.AWAITING_APPROVAL)
    actions = _still_waiting(waiting, DASHBOARD_LIMIT)
    # Counted after the refresh, so the heading, the list and "+N more" agree: a write found
    # stale just now moves to the "needs attention" panel drawn after this one.
    total = waiting.count()
    url = reverse("admin:workflow_preparedaction_changelist") + "?queue=pending"
    return _on_dashboard(request, "admin/workflow/queue_on_dashboard.html", actions, total, url)


@panel("dashboard")
def attention_on_dashboard(request: HttpRequest) -> SafeString:
    """Stale writes nobody has dismissed: what an agent meant to do and did not."""
    unseen = needing_attention(member_workspace_ids(request))
    total = unseen.count()
    shown = _listed(unseen, DASHBOARD_LIMIT) if total else []
    url = reverse("admin:workflow_preparedaction_changelist") + "?queue=attention"
    return _on_dashboard(request, "admin/workflow/attention_on_dashboard.html", shown, total, url)


@panel("dashboard")
def agendas_on_dashboard(request: HttpRequest) -> SafeString:
    """Agendas still open, and the finished ones whose outcomes have not reached their records."""
    agendas = reachable(request, Agenda).filter(OPEN | UNSYNCED)
    total = agendas.count()
    fields = ("id", "title", "status", "sync_state", "actor_id", "workspace_id", "updated_at")
    shown = list(agendas.order_by("-updated_at").only(*fields)[:DASHBOARD_LIMIT]) if total else []
    url = reverse("admin:workflow_agenda_changelist") + "?attention=open_or_unsynced"
    template = "admin/workflow/agendas_on_dashboard.html"
    return _on_dashboard(request, template, shown, total, url, unsynced=Agenda.SYNC_PENDING)
