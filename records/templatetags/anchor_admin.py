"""Template tags for the admin index: the dashboard, built from the request in the context."""

from __future__ import annotations

from typing import Any

from django import template

from records.admin.dashboard import dashboard

register = template.Library()


@register.inclusion_tag("admin/anchor_dashboard.html", takes_context=True)
def anchor_dashboard(context: Any) -> dict[str, Any]:
    return {
        **dashboard(context["request"], context.get("app_list") or []),
        "request": context["request"],
    }
