"""A prepared action's state as a badge a person reads at a glance."""

from __future__ import annotations

from django.utils.html import format_html

from workflow.models import PreparedAction

BADGES = {
    PreparedAction.AWAITING_APPROVAL: ("awaiting your decision", "anchor-agent"),
    PreparedAction.COMMITTED: ("applied", "anchor-ok"),
    PreparedAction.REJECTED: ("rejected", "anchor-bad"),
    PreparedAction.STALE: ("stale: can no longer apply", "anchor-bad"),
    PreparedAction.PREPARED: ("prepared, not committed", ""),
}


def state_badge(state: str) -> str:
    label, css = BADGES.get(state, (state, ""))
    return format_html('<span class="anchor-badge {}">{}</span>', css, label)
