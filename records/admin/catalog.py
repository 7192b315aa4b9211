"""Workspaces and collections: what a person checks first, and edits through the services."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from records import services
from records.admin.common import (
    ServiceWriteAdmin,
    admin_context,
    as_validation_error,
    changed_rows,
    copy_saved,
    shorten,
)
from records.admin.scoping import ScopedInline, member_workspace_ids, reaches_everything
from records.errors import VERSION_CONFLICT, AnchorError
from records.models import Collection, CollectionAlias, Record, Workspace
from records.selectors.serialize import collection_dict
from records.validation import canonical_json


def _count_subquery(model: Any, link: str, **filters: Any) -> Coalesce:
    # One correlated COUNT per listed row, evaluated inside the page's single query: the
    # changelist never issues a query per row, and paging still limits the work to 100 rows.
    counted = (
        model.objects.filter(**{link: OuterRef("pk")}, **filters)
        .order_by()
        .values(link)
        .annotate(total=Count("pk"))
        .values("total")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


class WorkspaceForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Workspace
        fields = ["id"]
        labels = {"id": "Workspace ID"}
        help_texts = {
            "id": "1-64 letters, digits, '.', '_' or '-', e.g. team-a. You become its first "
            "member; add the others under Workspace memberships."
        }


@admin.register(Workspace)
class WorkspaceAdmin(ServiceWriteAdmin):
    """Workspaces appear when something is first written to them, or when a superuser adds one
    (becoming its first member, as `anchor_member add` makes one); there is nothing to edit."""

    workspace_path = "pk"
    form = WorkspaceForm
    list_display = ["id", "collection_count", "created_at"]
    search_fields = ["id"]
    refused = frozenset({"change", "delete"})

    def has_add_permission(self, request: HttpRequest) -> bool:
        return reaches_everything(request)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        membership, _ = services.workspace_membership_add(user=request.user, workspace_id=obj.id)
        copy_saved(obj, membership.workspace)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workspace]:
        count = _count_subquery(Collection, "workspace")
        workspaces: QuerySet[Workspace] = super().get_queryset(request)
        return workspaces.annotate(collection_count=count)

    @admin.display(description="collections", ordering="collection_count")
    def collection_count(self, obj: Workspace) -> int:
        return obj.collection_count  # type: ignore[attr-defined,no-any-return]


# What describes a collection to agents, as services.CollectionFields holds it.
DESCRIPTION = ("name", "purpose", "record_meaning", "typical_fields", "relationship_guidance")


def collection_digest(collection: Collection) -> str:
    """Collections carry no version number; a digest of their audited state stands in for one."""
    state = collection_dict(collection, view="state")
    return hashlib.sha256(canonical_json(state).encode()).hexdigest()[:20]


class CollectionForm(forms.ModelForm):  # type: ignore[type-arg]
    typical_fields = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One field name per line: the fields records in this collection usually have.",
    )
    change_reason = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Why you are changing this; kept in the audit trail.",
    )
    loaded_state = forms.CharField(required=False, widget=forms.HiddenInput)
    # Set by CollectionAdmin.get_form: only a superuser may leave the workspace empty and have
    # the default one created; anyone else picks one of their own.
    may_use_default_workspace = True

    class Meta:
        model = Collection
        fields = ["workspace", *DESCRIPTION, "requires_approval"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance._state.adding:  # UUID keys are set before saving
            self.initial["typical_fields"] = "\n".join(self.instance.typical_fields or [])
            self.fields["loaded_state"].initial = collection_digest(self.instance)
        elif "workspace" in self.fields and not self.may_use_default_workspace:
            self.fields["workspace"].help_text = "One of the workspaces you are a member of."
        elif "workspace" in self.fields:
            workspace = self.fields["workspace"]
            workspace.initial, workspace.required = settings.ANCHOR_WORKSPACE_ID, False
            workspace.help_text = (
                "Leave empty for the default workspace; it is created if it does not exist."
            )

    def clean_typical_fields(self) -> list[str]:
        lines = self.cleaned_data["typical_fields"].splitlines()
        return [line.strip() for line in lines if line.strip()]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        try:
            described = {name: cleaned.get(name, "") for name in DESCRIPTION}
            cleaned["fields"] = services.CollectionFields.validated(**described)
        except AnchorError as exc:
            field = str(exc.details.get("field", "")).split("[")[0]
            self.add_error(field if field in self.fields else None, as_validation_error(exc))
            return cleaned
        if not self.instance._state.adding and cleaned.get("loaded_state") != collection_digest(
            self.instance
        ):
            raise forms.ValidationError(
                "This collection changed since you opened it (someone edited its description, "
                "policy or aliases). Nothing was saved. Reload the page to see the current "
                "state and make your change again.",
                code="stale",
            )
        return cleaned


class CollectionAliasInline(ScopedInline, admin.TabularInline):  # type: ignore[type-arg]
    model = CollectionAlias
    fields = ["alias", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    extra = 1
    verbose_name = "alias (another name agents may use for this collection)"


@admin.register(Collection)
class CollectionAdmin(ServiceWriteAdmin):
    workspace_path = "workspace"
    form = CollectionForm
    inlines = [CollectionAliasInline]
    list_display = [
        "name",
        "workspace",
        "purpose_summary",
        "active_records",
        "requires_approval",
        "updated_at",
    ]
    list_filter = ["workspace", "requires_approval"]
    list_select_related = ["workspace"]
    search_fields = ["name", "normalized_name", "purpose", "=id"]
    readonly_fields = ["id", "created_by", "created_at", "updated_at", "records_link"]
    refused = frozenset({"delete"})  # records hang off collections and the audit trail names them

    def get_queryset(self, request: HttpRequest) -> QuerySet[Collection]:
        count = _count_subquery(Record, "collection", archived_at__isnull=True)
        collections: QuerySet[Collection] = super().get_queryset(request)
        return collections.annotate(active_records=count)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = cast(type[CollectionForm], super().get_form(request, obj, change, **kwargs))
        form.may_use_default_workspace = member_workspace_ids(request) is None
        return form

    def get_fieldsets(self, request: HttpRequest, obj: Collection | None = None) -> Any:
        provenance = ["id", "records_link", "created_by", "created_at", "updated_at"]
        return [
            (None, {"fields": ["workspace", *DESCRIPTION]}),
            ("Policy", {"fields": ["requires_approval"]}),
            ("This change", {"fields": ["change_reason", "loaded_state"]}),
            *([("Provenance", {"fields": provenance})] if obj else []),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Collection | None = None) -> Any:
        # A collection never moves between workspaces: every row in it carries the workspace.
        return [*self.readonly_fields, "workspace"] if obj else self.readonly_fields

    @admin.display(description="purpose")
    def purpose_summary(self, obj: Collection) -> str:
        return shorten(obj.purpose, 90)

    @admin.display(description="active records", ordering="active_records")
    def active_records(self, obj: Collection) -> int:
        return obj.active_records  # type: ignore[attr-defined,no-any-return]

    @admin.display(description="records")
    def records_link(self, obj: Collection) -> str:
        url = reverse("admin:records_record_changelist")
        return format_html(
            '<a href="{}?collection__id__exact={}">Browse the records of {}</a>',
            url,
            obj.pk,
            obj.name,
        )

    def save_model(
        self, request: HttpRequest, obj: Collection, form: CollectionForm, change: bool
    ) -> None:
        cleaned = form.cleaned_data
        fields: services.CollectionFields = cleaned["fields"]
        gated = bool(cleaned.get("requires_approval"))
        # A new collection left without a workspace (a superuser's choice) gets the default one.
        workspace_id = obj.workspace_id or settings.ANCHOR_WORKSPACE_ID
        ctx = admin_context(request, workspace_id, cleaned.get("change_reason", ""))
        if not change:
            current = services.collection_create(ctx=ctx, fields=fields)
        else:
            current = Collection.objects.select_for_update().get(pk=obj.pk)
            if collection_digest(current) != cleaned.get("loaded_state"):
                raise AnchorError(
                    VERSION_CONFLICT,
                    f"Collection {current.name!r} changed while you were editing it; reload the "
                    "page and make your change again.",
                )
            before = collection_dict(current, view="state")
            if any(before[key] != value for key, value in asdict(fields).items()):
                services.collection_update(ctx=ctx, collection_id=obj.pk, fields=fields)
        if current.requires_approval != gated:
            services.collection_set_requires_approval(
                ctx=ctx, collection_id=current.pk, requires_approval=gated
            )
        copy_saved(obj, Collection.objects.get(pk=current.pk))

    def save_formset(
        self, request: HttpRequest, form: CollectionForm, formset: Any, change: bool
    ) -> None:
        """Alias rows become collection_alias_add / _remove calls, each audited."""
        collection: Collection = form.instance
        ctx = admin_context(
            request, collection.workspace_id, form.cleaned_data.get("change_reason", "")
        )
        gone, made = changed_rows(formset)
        for row in gone:
            alias = row.initial["alias"]
            services.collection_alias_remove(ctx=ctx, collection_id=collection.pk, alias=alias)
        for row in made:
            alias = row.cleaned_data["alias"]
            services.collection_alias_add(ctx=ctx, collection_id=collection.pk, alias=alias)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
