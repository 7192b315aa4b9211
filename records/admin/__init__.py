"""The Django admin over the store: read it, and write only through records.services. Each person
sees only their workspaces (records.admin.scoping). Importing the modules registers them."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from records.admin import access, audit, catalog, links, record_admin  # noqa: F401

admin.site.site_header = "Anchor"
admin.site.site_title = "Anchor admin"
admin.site.index_title = "What your agents remember, and what they changed"

_apps_by_name = admin.site.get_app_list
# What waits for a person heads the sidebar and the index: the approval queue first (named by
# label: the store does not import the workflow that owns it), then the rest as Django orders it.
QUEUE = ("workflow", "PreparedAction")


def _queue_first(request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
    apps = _apps_by_name(request, app_label)
    apps.sort(key=lambda app: app["app_label"] != QUEUE[0])
    for app in apps:
        app["models"].sort(key=lambda model: model["object_name"] != QUEUE[1])
    return apps


admin.site.get_app_list = _queue_first  # type: ignore[method-assign]
