"""Records: browse many quickly, read one with its history and neighbourhood, and edit, alias,
link or archive it as a version-checked, audited write.

A record page opens read-only; the edit form (?edit=1) shows at most LINK_LIMIT of its links
as editable rows, so a hub record still opens and saves. Its forms run the services' checks
early, beside each field; the services' re-check under lock at save time is the one that counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from records import services
from records import validation as v
from records.admin.common import (
    PANELS,
    ChoicesFilter,
    ServiceWriteAdmin,
    admin_context,
    admin_page,
    as_validation_error,
    changed_rows,
    copy_saved,
    report_refusal,
    stored_json,
    write_each,
)
from records.admin.neighbourhood import LINK_LIMIT, ORDER, record_links, record_neighbourhood
from records.admin.record_writes import (
    admit_person_write,
    links_revision,
    record_edit_apply,
    stale_message,
)
from records.admin.scoping import ScopedInline
from records.admin.timeline import record_timeline
from records.approval import Touched
from records.errors import AnchorError
from records.models import Record, RecordAlias, Relationship
from records.validation import canonical_json

EDIT = "edit"
PROVENANCE = ("id", "workspace", "version", "created_by", "created_at", "updated_at", "archived_at")
T = TypeVar("T")


class PrettyJSONField(forms.JSONField):
    """Indented, key-sorted, unescaped JSON, so a person can read and edit it in a textarea."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _service_check(form: forms.BaseForm, field: str, check: Callable[[Any, str], T]) -> T | None:
    """The service's own check of a field's cleaned value, its refusal shown beside the field."""
    try:
        return check(form.cleaned_data.get(field), field)
    except AnchorError as exc:
        form.add_error(field, as_validation_error(exc))
        return None


class RecordForm(forms.ModelForm):  # type: ignore[type-arg]
    # The model's field is called data, like BaseForm's bound data; Django's form metaclass
    # moves declared fields off the class, so the two never meet at runtime.
    data = PrettyJSONField(  # type: ignore[assignment]
        required=False,
        widget=forms.Textarea(attrs={"rows": 14, "cols": 80, "class": "anchor-json-input"}),
        help_text=(
            "A JSON object. Changed and added keys are saved; keys cannot be removed (the store "
            "never deletes fields; set a value to null instead)."
        ),
    )
    change_reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={"size": 80}),
        help_text="Why you are making this change; shown in the record's history.",
    )
    loaded_version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    loaded_links_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Record
        fields = ["collection", "title", "data"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.instance._state.adding and not self.is_bound:
            self.fields["loaded_version"].initial = self.instance.version
            self.fields["loaded_links_revision"].initial = links_revision(self.instance)

    def clean_title(self) -> str | None:
        return _service_check(self, "title", v.title)

    def clean_data(self) -> dict[str, Any] | None:
        def json_object(data: Any, field: str) -> dict[str, Any]:
            return v.json_object(field, {} if data is None else data)

        return _service_check(self, "data", json_object)

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        record: Record = self.instance
        if record._state.adding:  # UUID keys are set before saving
            return cleaned
        if record.archived_at is not None:
            raise forms.ValidationError(
                f"“{record.title}” is archived; its title and data can no longer change.",
                code="archived",
            )
        loaded_version = cleaned.get("loaded_version")
        loaded_links = cleaned.get("loaded_links_revision")
        if loaded_version is None or loaded_links is None:
            raise forms.ValidationError(
                "This form does not say which version of the record it was loaded at; reload "
                "the page and make your change again.",
                code="stale",
            )
        message = stale_message(record, loaded_version, loaded_links)
        if message:
            raise forms.ValidationError(message, code="stale")
        data = cleaned.get("data")
        if isinstance(data, dict):
            removed = sorted(set(record.data) - set(data))
            if removed:
                self.add_error(
                    "data",
                    f"Keys cannot be removed: {', '.join(removed)}. The store keeps every field "
                    "it was given; set a value to null to clear it.",
                )
        return cleaned


class RecordAliasForm(forms.ModelForm):  # type: ignore[type-arg]
    def clean_alias(self) -> str | None:
        return _service_check(self, "alias", v.title)


class OutgoingLinkForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Relationship
        fields = ["relationship_type", "target"]

    def clean_relationship_type(self) -> str | None:
        return _service_check(self, "relationship_type", v.relationship_type)

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        target: Record | None = cleaned.get("target")
        source = self.instance.source if self.instance.source_id else None
        if target is None or source is None or not self.has_changed():
            return cleaned
        if target.workspace_id != source.workspace_id:
            self.add_error("target", "That record belongs to another workspace.")
        elif target.pk == source.pk:
            self.add_error("target", "A record cannot be linked to itself.")
        elif target.archived_at is not None:
            self.add_error("target", f"“{target.title}” is archived; new links to it are refused.")
        return cleaned


def _readable(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def record_link(record: Record) -> str:
    url = reverse("admin:records_record_change", args=[record.pk])
    suffix = " (archived)" if record.archived_at else ""
    return format_html('<a href="{}">{}</a>{}', url, record.title, suffix)


class ArchivedFilter(ChoicesFilter):
    title = parameter_name = "archived"
    options = {
        "no": ("Active", Q(archived_at__isnull=True)),
        "yes": ("Archived", Q(archived_at__isnull=False)),
    }


class RecordAliasInline(ScopedInline, admin.TabularInline):  # type: ignore[type-arg]
    model = RecordAlias
    form = RecordAliasForm
    fields = ["alias", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    extra = 1
    verbose_name = "alias"
    verbose_name_plural = "aliases (other names this record is known by)"


class CappedLinkFormSet(BaseInlineFormSet):  # type: ignore[type-arg]
    """The first LINK_LIMIT links, in a fixed order, so the rows posted back are the rows drawn
    (the relationship list edits those past the cap)."""

    def get_queryset(self) -> QuerySet[Relationship]:
        if not hasattr(self, "_capped"):
            self._capped = super().get_queryset().order_by(*ORDER)[:LINK_LIMIT]
        return self._capped


class OutgoingLinkInline(ScopedInline, admin.TabularInline):  # type: ignore[type-arg]
    model = Relationship
    form = OutgoingLinkForm
    formset = CappedLinkFormSet
    fk_name = "source"
    fields = ["relationship_type", "target", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]
    raw_id_fields = ["target"]
    extra = 1
    verbose_name = "link from this record"
    verbose_name_plural = (
        f"links from this record (this record → target; the first {LINK_LIMIT} are editable here)"
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Relationship]:
        return super().get_queryset(request).select_related("target")


@admin.register(Record)
class RecordAdmin(ServiceWriteAdmin):
    workspace_path = "workspace"
    form = RecordForm
    change_form_template = "admin/records/record/change_form.html"
    list_display = ["title", "collection", "version", "is_archived", "updated_at", "workspace"]
    list_filter = ["workspace", "collection", ArchivedFilter, "created_at", "updated_at"]
    list_select_related = ["collection", "workspace"]
    search_fields = ["title", "=id", "aliases__alias"]
    autocomplete_fields = ["collection"]
    ordering = ["-created_at", "-id"]
    # Counting 100,000 rows for "N total" on every page load buys a person nothing.
    show_full_result_count = False
    list_per_page = 50
    actions = ["archive_selected"]
    pages = {"archive": "archive"}
    refused = frozenset({"delete"})  # archive instead: the history and links stay readable
    readonly_fields = [*PROVENANCE, "data_pretty"]

    def get_fieldsets(self, request: HttpRequest, obj: Record | None = None) -> Any:
        if obj is None:
            return [(None, {"fields": ["collection", "title", "data", "change_reason"]})]
        editable = obj.archived_at is None
        this_change = ["change_reason", "loaded_version", "loaded_links_revision"]
        return [
            (None, {"fields": ["collection", "title", "data" if editable else "data_pretty"]}),
            *([("This change", {"fields": this_change})] if editable else []),
            ("Provenance", {"fields": PROVENANCE}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Record | None = None) -> Any:
        if obj is None:
            return []
        locked = ["collection"] if obj.archived_at is None else ["collection", "title"]
        return [*self.readonly_fields, *locked]

    def get_inlines(self, request: HttpRequest, obj: Record | None) -> list[Any]:
        if obj is None:
            return []
        return [RecordAliasInline, OutgoingLinkInline]

    @admin.display(description="archived", boolean=True, ordering="archived_at")
    def is_archived(self, obj: Record) -> bool:
        return obj.archived_at is not None

    data_pretty = stored_json("data", "data", fold_over=4000)

    # --- reading -----------------------------------------------------------------------------

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        record = self.get_object(request, object_id)
        if request.method == "GET" and EDIT not in request.GET:
            return self.read_view(request, record)
        extra_context = {**(extra_context or {}), **self._page_context(record)}
        extra_context["read_url"] = reverse("admin:records_record_change", args=[record.pk])
        extra_context["edit_panels"] = [panel(request, record) for panel in PANELS["record_edit"]]
        return super().change_view(request, object_id, form_url, extra_context)

    def _page_context(self, record: Record) -> dict[str, Any]:
        timeline, older = record_timeline(record)
        return {
            "timeline": timeline,
            "timeline_more": older,
            "audit_url": reverse("admin:records_auditevent_changelist") + f"?record_id={record.pk}",
            "archive_url": reverse("admin:records_record_archive", args=[record.pk])
            + f"?version={record.version}",
        }

    def read_view(self, request: HttpRequest, record: Record) -> HttpResponse:
        """The page a person lands on: data, pending writes, links and history."""
        outgoing, incoming = record_links(record)
        change_url = reverse("admin:records_record_change", args=[record.pk])
        return admin_page(
            self,
            request,
            "admin/records/record/read.html",
            **self._page_context(record),
            title=record.title,
            original=record,
            fields=[(key, _readable(value)) for key, value in sorted(record.data.items())],
            aliases=list(record.aliases.order_by("alias").values_list("alias", flat=True)),
            panels=[panel(request, record) for panel in PANELS["record"]],
            neighbourhood=record_neighbourhood(record, outgoing, incoming),
            outgoing=outgoing,
            incoming=incoming,
            can_edit=self.has_change_permission(request, record),
            edit_url=f"{change_url}?{EDIT}=1",
        )

    # --- writing -----------------------------------------------------------------------------

    def response_post_save_change(self, request: HttpRequest, obj: Any) -> HttpResponseRedirect:
        """Save lands on the record just saved, not Django's list of every record."""
        return HttpResponseRedirect(reverse("admin:records_record_change", args=[obj.pk]))

    response_post_save_add = response_post_save_change

    def save_model(self, request: HttpRequest, obj: Record, form: RecordForm, change: bool) -> None:
        cleaned = form.cleaned_data
        if not change:
            collection = cleaned["collection"]
            ctx = admin_context(request, collection.workspace_id, cleaned.get("change_reason", ""))
            admit_person_write(ctx, Touched.of(collections=[collection.pk]))
            created = services.record_create(
                ctx=ctx, collection_id=collection.pk, title=cleaned["title"], data=cleaned["data"]
            )
            copy_saved(obj, created)
            return
        ctx = admin_context(request, obj.workspace_id, cleaned.get("change_reason", ""))
        saved = record_edit_apply(
            ctx=ctx,
            record_id=obj.pk,
            loaded_version=cleaned["loaded_version"],
            loaded_links=cleaned["loaded_links_revision"],
            title=cleaned["title"],
            data=cleaned["data"],
        )
        copy_saved(obj, saved)

    def save_formset(
        self, request: HttpRequest, form: RecordForm, formset: Any, change: bool
    ) -> None:
        record: Record = form.instance
        ctx = admin_context(
            request, record.workspace_id, form.cleaned_data.get("change_reason", "")
        )
        gone, made = changed_rows(formset)
        # Nothing for Django to log or save: the services wrote and audited each row.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        if formset.model is RecordAlias:
            admit_person_write(ctx, Touched.of(records=[record.pk]))
            saved = record
            for row in gone:
                alias = row.initial["alias"]
                saved = services.record_alias_remove(
                    ctx=ctx, record_id=record.pk, alias=alias, expected_version=saved.version
                )
            for row in made:
                alias = row.cleaned_data["alias"]
                saved = services.record_alias_add(
                    ctx=ctx, record_id=record.pk, alias=alias, expected_version=saved.version
                )
            copy_saved(record, saved)
            return
        removed = [row.instance.pk for row in gone]
        targets = [row.cleaned_data["target"].pk for row in made]
        admit_person_write(ctx, Touched.of(records=[record.pk, *targets], relationships=removed))
        for relationship_id in removed:
            services.relationship_delete(ctx=ctx, relationship_id=relationship_id)
        for row in made:
            services.relationship_create(
                ctx=ctx,
                source_id=record.pk,
                relationship_type=row.cleaned_data["relationship_type"],
                target_id=row.cleaned_data["target"].pk,
            )

    # --- archiving ---------------------------------------------------------------------------

    @admin.action(description="Archive selected records (through the service, audited)")
    def archive_selected(self, request: HttpRequest, queryset: QuerySet[Record]) -> None:
        def archive(record: Record) -> None:
            ctx = admin_context(request, record.workspace_id, "Archived from the record list.")
            admit_person_write(ctx, Touched.of(records=[record.pk]))
            services.record_archive(ctx=ctx, record_id=record.pk, expected_version=record.version)

        archived = write_each(self, request, queryset.filter(archived_at__isnull=True), archive)
        self.message_user(request, f"Archived {archived} record(s).", messages.SUCCESS)

    def archive_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Confirm, then archive at the version the person was looking at, with their reason."""
        record = self.get_object(request, object_id)  # another workspace's record is a 404
        if not self.has_change_permission(request, record):
            raise PermissionDenied
        change_url = reverse("admin:records_record_change", args=[record.pk])
        source = request.POST if request.method == "POST" else request.GET
        try:
            version = int(source.get("version", ""))
        except ValueError:
            version = record.version
        if request.method == "POST":
            ctx = admin_context(request, record.workspace_id, request.POST.get("reason", ""))
            try:
                admit_person_write(ctx, Touched.of(records=[record.pk]))
                services.record_archive(ctx=ctx, record_id=record.pk, expected_version=version)
            except AnchorError as exc:
                report_refusal(self, request, exc)
            else:
                self.message_user(request, f"Archived “{record.title}”.", messages.SUCCESS)
            return HttpResponseRedirect(change_url)
        return admin_page(
            self,
            request,
            "admin/records/record/archive_confirm.html",
            title=f"Archive “{record.title}”?",
            record=record,
            version=version,
            change_url=change_url,
        )
