"""Stale writes a person has not yet seen: listed until someone dismisses them.

A write that can no longer apply is final, but it is not nothing: a person may have expected it
(the agent said it would update Kirat) and should hear that it did not happen. It stays listed
on the dashboard and on its records' pages, with the reason, until a person dismisses it.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone

from records.errors import invalid, not_found
from workflow.models import ActionState, PreparedAction


def needing_attention(workspaces: frozenset[str] | None) -> QuerySet[PreparedAction]:
    """Stale writes nobody dismissed, in these workspaces (None: every workspace)."""
    stale = PreparedAction.objects.filter(state=ActionState.STALE, dismissed_at__isnull=True)
    return stale if workspaces is None else stale.filter(workspace_id__in=workspaces)


def dismiss_stale_action(*, action_id: str, reviewer: str) -> None:
    """Set a stale write aside. Claimed only while it is still stale and not dismissed, so two
    people dismissing at once both succeed and the first name stands."""
    claimed = PreparedAction.objects.filter(
        pk=action_id, state=ActionState.STALE, dismissed_at__isnull=True
    ).update(dismissed_by=reviewer, dismissed_at=timezone.now())
    if claimed:
        return
    action = PreparedAction.objects.filter(pk=action_id).only("state", "dismissed_by").first()
    if action is None:
        raise not_found("action", action_id)
    if action.state != ActionState.STALE:
        raise invalid(
            "action_id", f"only a stale write can be dismissed; this one is {action.state}."
        )
