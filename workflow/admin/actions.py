"""The approval queue: a person reads what an agent wants to write, and why, and decides.

Approving calls workflow.actions.approve_prepared_action, which reruns every commit-time check
(a write that went stale is refused, never applied); rejecting records the person's reason,
which the agent reads by replaying commit_write. Review tickets are shown for context only.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from records.admin.common import ReadOnlyAdmin, actor_for, json_block
from records.errors import AnchorError
from workflow.actions import approve_prepared_action, reject_prepared_action
from workflow.models import PreparedAction, ReviewTicket


class PendingFilter(admin.SimpleListFilter):
    """Opens on the queue itself: what waits for a person."""

    title = "queue"
    parameter_name = "queue"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("pending", "Awaiting a person"), ("decided", "Decided or closed")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "pending":
            return queryset.filter(state=PreparedAction.AWAITING_APPROVAL)
        if self.value() == "decided":
            return queryset.exclude(state=PreparedAction.AWAITING_APPROVAL)
        return queryset


class RejectForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        help_text="The agent reads this when it asks about the write again; say what is wrong.",
    )


@admin.register(PreparedAction)
class PreparedActionAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    change_form_template = "admin/workflow/preparedaction/change_form.html"
    list_display = ["created_at", "operation", "state", "actor_id", "reason", "preview_summary"]
    list_filter = [PendingFilter, "state", "operation", "created_at", "workspace"]
    search_fields = ["=id", "actor_id", "decision_reason", "clarification"]
    show_full_result_count = False
    actions = ["approve_selected"]
    fieldsets = [
        (None, {"fields": ["operation", "state", "actor_id", "created_at", "expires_at"]}),
        (
            "Why the agent wants it",
            {"fields": ["decision_reason", "clarification_text", "evidence_json"]},
        ),
        ("What it would write", {"fields": ["preview_json", "arguments_json"]}),
        ("Decision", {"fields": ["decided_by", "decided_at", "decision_note", "result_json"]}),
        ("Identifiers", {"fields": ["id", "workspace", "review_ids", "collection_ids"]}),
    ]
    readonly_fields = [
        "operation",
        "state",
        "actor_id",
        "created_at",
        "expires_at",
        "decision_reason",
        "clarification_text",
        "evidence_json",
        "preview_json",
        "arguments_json",
        "decided_by",
        "decided_at",
        "decision_note",
        "result_json",
        "id",
        "workspace",
        "review_ids",
        "collection_ids",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PreparedAction]:
        # Pending first, then newest: the queue is what a person opens this page for.
        pending_first = Case(
            When(state=PreparedAction.AWAITING_APPROVAL, then=Value(0)),
            default=Value(1),
            output_field=IntegerField(),
        )
        return super().get_queryset(request).order_by(pending_first, "-created_at")

    def has_approve_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("workflow.change_preparedaction")

    @admin.display(description="stated reason")
    def reason(self, obj: PreparedAction) -> str:
        text = obj.decision_reason
        return text if len(text) <= 90 else text[:89] + "…"

    @admin.display(description="would write")
    def preview_summary(self, obj: PreparedAction) -> str:
        preview = obj.preview if isinstance(obj.preview, dict) else {}
        title = preview.get("title") or preview.get("name") or ""
        return f"{obj.operation}: {title}" if title else obj.operation

    @admin.display(description="agent-reported clarification (unverified by the server)")
    def clarification_text(self, obj: PreparedAction) -> str:
        if not obj.clarification.strip():
            return "—"
        return format_html(
            '<span class="anchor-badge anchor-agent">agent-reported</span> “{}”',
            obj.clarification,
        )

    @admin.display(description="evidence (the reviews the agent cited, as checked)")
    def evidence_json(self, obj: PreparedAction) -> str:
        return json_block(obj.evidence, fold_over=3000)  # the reviewer needs to read it

    @admin.display(description="preview")
    def preview_json(self, obj: PreparedAction) -> str:
        return json_block(obj.preview, fold_over=6000)

    @admin.display(description="arguments")
    def arguments_json(self, obj: PreparedAction) -> str:
        return json_block(obj.arguments)

    @admin.display(description="stored result")
    def result_json(self, obj: PreparedAction) -> str:
        return json_block(obj.result)

    # --- deciding ----------------------------------------------------------------------------

    def _approve(self, request: HttpRequest, action_id: str) -> bool:
        try:
            approve_prepared_action(action_id=action_id, reviewer=actor_for(request))
        except AnchorError as exc:
            self.message_user(request, f"Not applied: {exc.message} ({exc.code})", messages.ERROR)
            return False
        self.message_user(request, f"Approved and applied action {action_id}.", messages.SUCCESS)
        return True

    @admin.action(description="Approve and apply selected actions", permissions=["approve"])
    def approve_selected(self, request: HttpRequest, queryset: QuerySet[PreparedAction]) -> None:
        for action in queryset.filter(state=PreparedAction.AWAITING_APPROVAL):
            self._approve(request, action.pk)

    def get_urls(self) -> list[Any]:
        decide = [
            path(
                "<path:object_id>/approve/",
                self.admin_site.admin_view(self.approve_view),
                name="workflow_preparedaction_approve",
            ),
            path(
                "<path:object_id>/reject/",
                self.admin_site.admin_view(self.reject_view),
                name="workflow_preparedaction_reject",
            ),
        ]
        return [*decide, *super().get_urls()]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = dict(extra_context or {})
        extra_context["can_decide"] = self.has_approve_permission(request)
        extra_context["reject_form"] = RejectForm()
        return super().change_view(request, object_id, form_url, extra_context)

    def approve_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST" or not self.has_approve_permission(request):
            raise PermissionDenied
        action = self.get_object(request, object_id)  # another workspace's action is a 404
        self._approve(request, action.pk)
        return HttpResponseRedirect(
            reverse("admin:workflow_preparedaction_change", args=[action.pk])
        )

    def reject_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if not self.has_approve_permission(request):
            raise PermissionDenied
        action = self.get_object(request, object_id)
        change_url = reverse("admin:workflow_preparedaction_change", args=[action.pk])
        form = RejectForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                reject_prepared_action(
                    action_id=action.pk,
                    reviewer=actor_for(request),
                    reason=form.cleaned_data["reason"],
                )
            except AnchorError as exc:
                self.message_user(request, f"Not rejected: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Rejected action {action.pk}.", messages.SUCCESS)
            return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Reject this write?",
            "original": action,
            "reject_form": form,
            "change_url": change_url,
        }
        return TemplateResponse(request, "admin/workflow/preparedaction/reject.html", context)


@admin.register(ReviewTicket)
class ReviewTicketAdmin(ReadOnlyAdmin):
    """What an agent looked at before writing, and the counters that make it stale."""

    workspace_path = "workspace"

    list_display = ["created_at", "kind", "actor_id", "asked", "expires_at"]
    list_filter = ["kind", "created_at", "workspace"]
    search_fields = ["=id", "actor_id"]
    show_full_result_count = False
    readonly_fields = [
        "id",
        "kind",
        "actor_id",
        "workspace",
        "created_at",
        "expires_at",
        "request_json",
        "answer_json",
        "counters_json",
    ]
    fields = tuple(readonly_fields)

    @admin.display(description="asked")
    def asked(self, obj: ReviewTicket) -> str:
        request = obj.request if isinstance(obj.request, dict) else {}
        return str(request.get("query") or request.get("name") or "")[:80]

    @admin.display(description="request")
    def request_json(self, obj: ReviewTicket) -> str:
        return json_block(obj.request)

    @admin.display(description="answer")
    def answer_json(self, obj: ReviewTicket) -> str:
        return json_block(obj.answer)

    @admin.display(description="counters it depends on")
    def counters_json(self, obj: ReviewTicket) -> str:
        return json_block(obj.counters)
