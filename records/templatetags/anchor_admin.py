"""Template tags for the admin: the dashboard, built from the request in the context, and the
one wording of who acted (records.acting)."""

from __future__ import annotations

from typing import Any

from django import template

from records import acting
from records.admin.dashboard import dashboard

register = template.Library()
register.filter("acted_by", acting.acted_by)


@register.inclusion_tag("admin/anchor_dashboard.html", takes_context=True)
def anchor_dashboard(context: Any) -> dict[str, Any]:
    return {
        **dashboard(context["request"], context.get("app_list") or []),
        "request": context["request"],
    }
