"""Relationships and self mappings across the workspace: a person may add a link or remove a
wrong one, or remove a wrong self mapping (agents set them), all through the audited services."""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from records import services
from records.admin.common import (
    ReadOnlyAdmin,
    ServiceWriteAdmin,
    admin_context,
    copy_saved,
    write_each,
)
from records.admin.record_admin import record_link
from records.admin.record_writes import admit_person_write
from records.approval import Touched
from records.errors import AnchorError
from records.models import Relationship, SelfMapping


class RelationshipForm(forms.ModelForm):  # type: ignore[type-arg]
    change_reason = forms.CharField(
        required=False, max_length=2000, help_text="Why this link is right; kept in the audit."
    )

    class Meta:
        model = Relationship
        fields = ["source", "relationship_type", "target"]


@admin.register(Relationship)
class RelationshipAdmin(ServiceWriteAdmin):
    workspace_path = "workspace"
    form = RelationshipForm
    list_display = ["source_link", "relationship_type", "target_link", "created_by", "created_at"]
    list_filter = ["relationship_type", "created_at", "workspace"]
    list_select_related = ["source", "target"]
    raw_id_fields = ["source", "target"]
    search_fields = [
        "relationship_type",
        "=source__id",
        "=target__id",
        "source__title",
        "target__title",
    ]
    show_full_result_count = False
    actions = ["remove_selected"]
    # A link is a fact; a wrong one is removed and the right one added.
    refused = frozenset({"change"})

    def get_fields(self, request: HttpRequest, obj: Relationship | None = None) -> Any:
        if obj is None:
            return ["source", "relationship_type", "target", "change_reason"]
        return [
            "source_link",
            "relationship_type",
            "target_link",
            "workspace",
            "created_by",
            "created_at",
            "id",
        ]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # removal goes through the audited service
        return actions

    @admin.display(description="source", ordering="source__title")
    def source_link(self, obj: Relationship) -> str:
        return record_link(obj.source)

    @admin.display(description="target", ordering="target__title")
    def target_link(self, obj: Relationship) -> str:
        return record_link(obj.target)

    def save_model(
        self, request: HttpRequest, obj: Relationship, form: RelationshipForm, change: bool
    ) -> None:
        source = form.cleaned_data["source"]
        ctx = admin_context(request, source.workspace_id, form.cleaned_data["change_reason"])
        target = form.cleaned_data["target"]
        admit_person_write(ctx, Touched.of(records=[source.pk, target.pk]))
        rel, created = services.relationship_create(
            ctx=ctx,
            source_id=source.pk,
            relationship_type=form.cleaned_data["relationship_type"],
            target_id=form.cleaned_data["target"].pk,
        )
        if not created:
            self.message_user(
                request, "That link already existed; nothing changed.", messages.WARNING
            )
        copy_saved(obj, rel)

    def delete_model(self, request: HttpRequest, obj: Relationship) -> None:
        ctx = admin_context(request, obj.workspace_id, "Link removed in the admin.")
        services.relationship_delete(ctx=ctx, relationship_id=obj.pk)

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> Any:
        try:
            return super().delete_view(request, object_id, extra_context)
        except AnchorError as exc:
            self.message_user(request, f"Nothing was removed. {exc.message}", messages.ERROR)
            return self.response_post_save_change(request, None)

    @admin.action(
        description="Remove selected links (through the service, audited)", permissions=["delete"]
    )
    def remove_selected(self, request: HttpRequest, queryset: QuerySet[Relationship]) -> None:
        removed = write_each(
            self, request, queryset, partial(self.delete_model, request), "Not removed:"
        )
        self.message_user(request, f"Removed {removed} link(s).", messages.SUCCESS)


@admin.register(SelfMapping)
class SelfMappingAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    list_display = ["actor_id", "record_title", "workspace", "created_at"]
    list_filter = ["workspace"]
    list_select_related = ["record"]
    search_fields = ["actor_id", "=record__id", "record__title"]
    fields = ["actor_id", "record_title", "workspace", "created_at"]
    actions = ["remove_mappings"]

    @admin.display(description="record")
    def record_title(self, obj: SelfMapping) -> str:
        return record_link(obj.record)

    def has_remove_permission(self, request: HttpRequest) -> bool:
        # The mapping is read-only as a row, but removing a wrong one is a deliberate,
        # audited act that needs the model's delete permission.
        return request.user.has_perm("records.delete_selfmapping")

    @admin.action(
        description="Remove mapping (the agent must ask who 'me' is again; audited)",
        permissions=["remove"],
    )
    def remove_mappings(self, request: HttpRequest, queryset: QuerySet[SelfMapping]) -> None:
        def remove(mapping: SelfMapping) -> None:
            reason = f"Self mapping of {mapping.actor_id!r} removed in the admin."
            ctx = admin_context(request, mapping.workspace_id, reason)
            # Another person may have removed it since this page was drawn: the service then
            # answers NOT_FOUND, reported as a refusal instead of a server error.
            services.self_mapping_remove(ctx=ctx, actor_id=mapping.actor_id)

        removed = write_each(self, request, queryset, remove, "Not removed:")
        if removed:
            self.message_user(request, f"Removed {removed} self mapping(s).", messages.SUCCESS)
        elif not queryset:
            self.message_user(
                request,
                "Nothing was removed: the selected self mapping no longer exists (removed "
                "already?).",
                messages.WARNING,
            )
