"""What every store admin shares: who is writing, how refusals are shown, how JSON reads, and
the panels other apps add to its pages.

People write through the same services as agents, as the signed-in user; every write context
is refused for a workspace the person is not a member of (records.admin.scoping). The workflow
registers its panels (pending writes on a record page, the approval queue on the index) here
at import time, and the store's pages call whatever is registered, without importing it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.contrib.admin.utils import flatten_fieldsets
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html
from django.utils.safestring import SafeString

from records.admin.scoping import WorkspaceScopedAdmin, require_workspace
from records.errors import AnchorError
from records.services import WriteContext

Panel = Callable[..., SafeString]
# Where each list is drawn, and what its panels are called with: "record" (request, record) near
# the top of the record page, "record_edit" (request, record) at the top of its edit form,
# "dashboard" (request) on the admin index.
PANELS: dict[str, list[Panel]] = {"record": [], "record_edit": [], "dashboard": []}


def panel(where: str) -> Callable[[Panel], Panel]:
    def register(fn: Panel) -> Panel:
        PANELS[where].append(fn)
        return fn

    return register


def actor_for(request: HttpRequest) -> str:
    return f"user:{request.user.get_username()}"


def admin_context(request: HttpRequest, workspace_id: str, reason: str = "") -> WriteContext:
    require_workspace(request, workspace_id)
    reason = reason.strip() or f"Edited in the admin by {request.user.get_username()}."
    return WriteContext(
        workspace_id=workspace_id, actor_id=actor_for(request), decision_reason=reason
    )


def report_refusal(
    model_admin: admin.ModelAdmin[Any], request: HttpRequest, exc: AnchorError, *, refused: str = ""
) -> None:
    refused = refused or "Nothing was saved."
    model_admin.message_user(request, f"{refused} {exc.message} ({exc.code})", messages.ERROR)


def write_each(
    model_admin: admin.ModelAdmin[Any],
    request: HttpRequest,
    rows: Iterable[Any],
    write: Callable[[Any], object],
    refused: str = "",
) -> int:
    """An admin action's write per row: a refused row is reported and the others go on.
    Returns how many were written."""
    written = 0
    for row in rows:
        try:
            write(row)
        except AnchorError as exc:
            report_refusal(model_admin, request, exc, refused=refused)
        else:
            written += 1
    return written


def changed_rows(formset: Any) -> tuple[list[Any], list[Any]]:
    """(rows whose stored row goes, rows stored anew) of a formset's added, edited or deleted
    rows. An edited row is both: aliases and links carry no version of their own, and the trail
    then says what each was."""
    changed = [row for row in formset.forms if row.has_changed() or row in formset.deleted_forms]
    gone = [row for row in changed if not row.instance._state.adding]
    return gone, [row for row in changed if row not in formset.deleted_forms]


def as_validation_error(exc: AnchorError) -> ValidationError:
    """Service refusals carry their field in details; forms show them next to that field."""
    return ValidationError(f"{exc.message}", code=exc.code.lower())


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_block(value: Any, *, fold_over: int = 400, summary: str = "show") -> str:
    """Pretty JSON in a <pre>; long payloads folded in <details> so lists stay scannable."""
    if value is None:
        return "—"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    if len(text) <= fold_over:
        return format_html('<pre class="anchor-json">{}</pre>', text)
    return format_html(
        '<details><summary>{} ({} characters)</summary><pre class="anchor-json">{}</pre></details>',
        summary,
        len(text),
        text,
    )


def admin_page(
    model_admin: admin.ModelAdmin[Any], request: HttpRequest, template: str, **context: Any
) -> TemplateResponse:
    """A page of our own inside the admin's frame (header, sidebar, the model's breadcrumbs)."""
    shown = {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, **context}
    return TemplateResponse(request, template, shown)


def stored_json(name: str, description: str, **shown: Any) -> Any:
    """A read-only field showing a stored JSON column as it is."""

    @admin.display(description=description)
    def stored(model_admin: Any, obj: Any) -> str:
        return json_block(getattr(obj, name), **shown)

    return stored


class ChoicesFilter(admin.SimpleListFilter):
    """A list filter declared as data: each choice's label and the rows it keeps."""

    options: ClassVar[dict[str, tuple[str, Q]]] = {}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(value, label) for value, (label, _) in self.options.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        chosen = self.options.get(self.value() or "")
        return queryset if chosen is None else queryset.filter(chosen[1])


class AnchorAdmin(WorkspaceScopedAdmin):
    """The base of the store's and the workflow's admins. `pages` maps a page's name to its
    path under an object's URL: method `<name>_view`, URL name `<app>_<model>_<name>`."""

    pages: ClassVar[dict[str, str]] = {}

    def get_urls(self) -> list[Any]:
        named = f"{self.opts.app_label}_{self.opts.model_name}"
        own = [
            path(
                f"<path:object_id>/{route}/",
                self.admin_site.admin_view(getattr(self, f"{name}_view")),
                name=f"{named}_{name}",
            )
            for name, route in self.pages.items()
        ]
        return [*own, *super().get_urls()]


class ReadOnlyAdmin(AnchorAdmin):
    """For rows only triggers or services write (audit, versions, counters): view, never edit.
    Every field listed is read-only, so its fields and fieldsets name each field once."""

    refused = frozenset({"add", "change", "delete"})

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self.readonly_fields or not (self.fieldsets or self.fields):
            return self.readonly_fields
        return flatten_fieldsets(self.get_fieldsets(request, obj))


class ServiceWriteAdmin(AnchorAdmin):
    """An admin whose saves call services inside the change view's transaction: a refusal only
    the locked re-check sees (a concurrent write) rolls back every write of the request and is
    shown as a message, never a half-applied edit."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except AnchorError as exc:
            report_refusal(self, request, exc)
            return HttpResponseRedirect(request.get_full_path())


def copy_saved(target: Any, saved: Any) -> None:
    """Give the admin's unsaved instance the identity and values the service stored, so
    Django's post-save steps (messages, log entry, redirect) point at the real row."""
    for model_field in saved._meta.concrete_fields:
        setattr(target, model_field.attname, getattr(saved, model_field.attname))
    target._state.adding = False
    target._state.db = saved._state.db
