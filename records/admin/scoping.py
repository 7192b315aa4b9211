"""Who sees what in the admin: a person reaches only the workspaces they are a member of.

Every ModelAdmin of the store and the workflow is a WorkspaceScopedAdmin declaring exactly one
of: ``workspace_path`` (row to workspace lookup: a staff member sees their workspaces' rows),
``owner_path`` (row to user: their own rows) or ``superusers_only`` (people and memberships).

Scoping get_queryset covers lists, search, actions and autocomplete. Here too: another
workspace's object is a 404 like a missing one; list filters and foreign-key choices (raw-ID
labels included) offer only reachable rows; secret fields are never a URL lookup.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib import admin
from django.contrib.admin.utils import NotRelationField, get_fields_from_path
from django.contrib.admin.widgets import ForeignKeyRawIdWidget
from django.core import checks
from django.core.exceptions import (
    FieldDoesNotExist,
    ImproperlyConfigured,
    PermissionDenied,
    ValidationError,
)
from django.db import models
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest

from records.models import Record, Workspace, WorkspaceMembership

# Never displayed, searched, filtered or ordered by, by anyone.
SECRET_FIELDS = frozenset({"key_hash"})

_CACHE_ATTR = "_anchor_member_workspaces"
_SEVERAL_ATTR = "_anchor_sees_several_workspaces"


def reaches_everything(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_superuser)


def member_workspace_ids(request: HttpRequest) -> frozenset[str] | None:
    """The workspaces the person may reach, or None for all (a superuser); once per request."""
    if reaches_everything(request):
        return None
    cached: frozenset[str] | None = getattr(request, _CACHE_ATTR, None)
    if cached is None:
        cached = frozenset()
        if request.user.is_authenticated:
            members = WorkspaceMembership.objects.filter(user_id=request.user.pk)
            cached = frozenset(members.values_list("workspace_id", flat=True))
        setattr(request, _CACHE_ATTR, cached)
    return cached


def sees_several_workspaces(request: HttpRequest) -> bool:
    """Whether the person reaches more than one workspace, so each item must say whose it is."""
    cached: bool | None = getattr(request, _SEVERAL_ATTR, None)
    if cached is None:
        workspaces = member_workspace_ids(request)
        cached = Workspace.objects.count() > 1 if workspaces is None else len(workspaces) > 1
        setattr(request, _SEVERAL_ATTR, cached)
    return cached


def require_workspace(request: HttpRequest, workspace_id: str) -> None:
    """Refuse a write into a workspace the person may not reach, whatever form or view led here."""
    allowed = member_workspace_ids(request)
    if allowed is not None and workspace_id not in allowed:
        raise PermissionDenied("You are not a member of that workspace.")


def reachable(
    request: HttpRequest, model: type[models.Model], admin_site: admin.AdminSite = admin.site
) -> QuerySet[Any]:
    """The rows of `model` the person may reach, by the scope its own admin declares (none
    but a superuser's for a model without a scoped admin: unknown means closed)."""
    rows = model._default_manager.all()
    if reaches_everything(request):
        return rows
    model_admin = admin_site.get_model_admin(model) if admin_site.is_registered(model) else None
    if isinstance(model_admin, WorkspaceScopedAdmin):
        return model_admin.scope_queryset(request, rows)
    return rows.none()


class ScopedRawIdWidget(ForeignKeyRawIdWidget):
    """Draws the label beside a raw-ID field only for a reachable row: a typed-in ID of another
    workspace's row is refused by the field and must not be named back on the error page."""

    def __init__(self, *args: Any, reachable_rows: QuerySet[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reachable_rows = reachable_rows

    def label_and_url_for_value(self, value: Any) -> tuple[str, str]:
        key = self.rel.get_related_field().name
        try:
            found = self.reachable_rows.filter(**{key: value}).exists()
        except (ValueError, TypeError, ValidationError):  # a malformed key names nothing
            found = False
        if not found:
            return "", ""
        return super().label_and_url_for_value(value)


class ScopedChoicesMixin:
    """Foreign-key choices offer only reachable rows; shared by model admins and inlines."""

    admin_site: admin.AdminSite

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        rows = reachable(request, db_field.related_model, self.admin_site)
        kwargs.setdefault("queryset", rows)
        if "widget" not in kwargs and db_field.name in getattr(self, "raw_id_fields", ()):
            kwargs["widget"] = ScopedRawIdWidget(
                db_field.remote_field,
                self.admin_site,
                using=kwargs.get("using"),
                reachable_rows=rows,
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        kwargs.setdefault("queryset", reachable(request, db_field.related_model, self.admin_site))
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A foreign-key list filter that lists only reachable rows (the workspace filter lists the
    person's workspaces, the collection filter their collections)."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        ordering = self.field_admin_ordering(field, request, model_admin)
        if reaches_everything(request):
            return field.get_choices(include_blank=False, ordering=ordering)
        rows = reachable(request, field.related_model, model_admin.admin_site)
        return field.get_choices(
            include_blank=False,
            ordering=ordering,
            limit_choices_to=Q(pk__in=rows.values("pk")),
        )


class WorkspaceScopedAdmin(ScopedChoicesMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    workspace_path: ClassVar[str | None] = None
    owner_path: ClassVar[str | None] = None
    superusers_only: ClassVar[bool] = False
    # What nobody does here by hand, whatever their permissions ("add", "change", "delete").
    refused: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def declared_scopes(cls) -> list[str]:
        names = ("workspace_path", "owner_path", "superusers_only")
        return [name for name in names if getattr(cls, name)]

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        errors = super().check(**kwargs)
        scopes = self.declared_scopes()
        if len(scopes) != 1:
            errors.append(
                checks.Error(
                    f"{type(self).__name__} must declare exactly one of workspace_path, "
                    f"owner_path or superusers_only; it declares {scopes or 'none'}.",
                    obj=type(self),
                    id="anchor.E101",
                )
            )
        return errors

    # --- the rows a person may reach ---------------------------------------------------------

    def scope_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if reaches_everything(request):
            return queryset
        if self.superusers_only:
            return queryset.none()
        if self.owner_path:
            return queryset.filter(**{self.owner_path: request.user.pk})
        if self.workspace_path:
            workspaces = member_workspace_ids(request) or frozenset()
            return queryset.filter(**{f"{self.workspace_path}__in": workspaces})
        raise ImproperlyConfigured(f"{type(self).__name__} declares no scope.")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return self.scope_queryset(request, super().get_queryset(request))

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        found = super().get_object(request, object_id, from_field)
        if found is None:
            # The same answer for "another workspace's" as for "no such row".
            raise Http404(f"No {self.opts.verbose_name} with that ID.")
        return found

    # --- permissions: what is refused to all, and rows only superusers manage ----------------

    def _closed(self, request: HttpRequest, what: str = "") -> bool:
        if what in self.refused:
            return True
        return self.superusers_only and not reaches_everything(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return not self._closed(request) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._closed(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not self._closed(request, "add") and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._closed(request, "change") and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._closed(request, "delete") and super().has_delete_permission(request, obj)

    # --- filters and URL lookups -------------------------------------------------------------

    def get_list_filter(self, request: HttpRequest) -> Any:
        return [
            (entry, ScopedRelatedFilter)
            if isinstance(entry, str) and self._is_relation(entry)
            else entry
            for entry in super().get_list_filter(request)
        ]

    def _is_relation(self, path: str) -> bool:
        try:
            last = get_fields_from_path(self.model, path)[-1]
        except (FieldDoesNotExist, NotRelationField):
            return False
        return bool(getattr(last, "is_relation", False))

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if SECRET_FIELDS.intersection(lookup.split("__")):
            return False
        return super().lookup_allowed(lookup, value, request)


class ScopedInline(ScopedChoicesMixin):
    """For inlines: the parent's admin scopes the rows; this scopes the choices in each row."""

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # A table row's inputs have only the column header above them: name each for
        # assistive technology (an unlabelled input is a WCAG 2.1 A failure).
        formfield = super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
        if formfield is not None:
            label = str(formfield.label or db_field.verbose_name)
            formfield.widget.attrs.setdefault("aria-label", label)
        return formfield


def records_titled(request: HttpRequest, term: str, limit: int) -> list[str]:
    """IDs of up to `limit` records the person may reach whose title or an alias holds `term`:
    the admin's searches by title (audit events, waiting writes) find what concerns them."""
    titled = Q(title__icontains=term) | Q(aliases__alias__icontains=term)
    records = reachable(request, Record).filter(titled)
    return list(records.values_list("id", flat=True).distinct()[:limit])
