"""Panels other apps add to the store's admin pages, without the store importing them: the
workflow registers functions here at import time (pending writes on a record page, the
approval queue on the index) and the store's pages call whatever is registered."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.utils.safestring import SafeString

# (request, record) -> HTML drawn near the top of the record page
RECORD_PANELS: list[Callable[[HttpRequest, Any], SafeString]] = []
# (request, record) -> HTML drawn at the top of the record's edit form
RECORD_EDIT_PANELS: list[Callable[[HttpRequest, Any], SafeString]] = []
# (request, workspace ids or None for every workspace) -> HTML drawn on the admin index
DASHBOARD_PANELS: list[Callable[[HttpRequest, frozenset[str] | None], SafeString]] = []


def record_panel(fn: Callable[[HttpRequest, Any], SafeString]) -> Callable[..., SafeString]:
    RECORD_PANELS.append(fn)
    return fn


def record_edit_panel(fn: Callable[[HttpRequest, Any], SafeString]) -> Callable[..., SafeString]:
    RECORD_EDIT_PANELS.append(fn)
    return fn


def dashboard_panel(
    fn: Callable[[HttpRequest, frozenset[str] | None], SafeString],
) -> Callable[..., SafeString]:
    DASHBOARD_PANELS.append(fn)
    return fn
