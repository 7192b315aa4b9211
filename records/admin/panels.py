"""Panels other apps add to the store's admin pages, without the store importing them: the
workflow registers functions here at import time (pending writes on a record page, the
approval queue on the index) and the store's pages call whatever is registered."""

from __future__ import annotations

from collections.abc import Callable

from django.utils.safestring import SafeString

Panel = Callable[..., SafeString]
# Where each list is drawn, and what its panels are called with: "record" (request, record) near
# the top of the record page, "record_edit" (request, record) at the top of its edit form,
# "dashboard" (request, workspace ids or None for every workspace) on the admin index.
PANELS: dict[str, list[Panel]] = {"record": [], "record_edit": [], "dashboard": []}


def panel(where: str) -> Callable[[Panel], Panel]:
    def register(fn: Panel) -> Panel:
        PANELS[where].append(fn)
        return fn

    return register
