"""A prepared action's state as a badge a person reads at a glance."""

from __future__ import annotations

from django.utils.html import format_html

from workflow.models import ActionState

BADGES: dict[str, tuple[str, str]] = {
    ActionState.AWAITING_APPROVAL: ("awaiting your decision", "anchor-agent"),
    ActionState.COMMITTED: ("applied", "anchor-ok"),
    ActionState.REJECTED: ("rejected", "anchor-bad"),
    ActionState.STALE: ("stale: can no longer apply", "anchor-bad"),
    ActionState.PREPARED: ("prepared, not committed", ""),
}


def state_badge(state: str) -> str:
    label, css = BADGES.get(state, (state, ""))
    return format_html('<span class="anchor-badge {}">{}</span>', css, label)
