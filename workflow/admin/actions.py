"""The approval queue: a person reads what an agent wants to write, and why, and decides.

Approving calls workflow.actions.approve_prepared_action, which reruns every commit-time check
(a write that went stale is refused, never applied); rejecting records the person's reason,
which the agent reads by replaying commit_write. Review tickets are shown for context only.
"""

from __future__ import annotations

from copy import copy
from datetime import UTC
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.core.exceptions import PermissionDenied
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from records.acting import acted_by
from records.admin.common import (
    ChoicesFilter,
    ReadOnlyAdmin,
    actor_for,
    admin_page,
    stored_json,
)
from records.admin.scoping import records_titled
from records.errors import AnchorError
from workflow.actions import (
    approve_prepared_action,
    dismiss_stale_action,
    mark_stale_pending,
    reject_prepared_action,
    stale_if_approved,
)
from workflow.admin.action_review import action_review
from workflow.admin.changes import QueueChangeList, state_badge
from workflow.models import ActionState, PreparedAction, ReviewTicket


class PendingFilter(ChoicesFilter):
    """Opens on the queue itself: what waits for a person."""

    title = parameter_name = "queue"
    options = {
        "pending": ("Awaiting a person", Q(state=ActionState.AWAITING_APPROVAL)),
        "attention": (
            "Went stale, not yet dismissed",
            Q(state=ActionState.STALE, dismissed_at__isnull=True),
        ),
        "decided": ("Decided or closed", ~Q(state=ActionState.AWAITING_APPROVAL)),
    }


class AgentFilter(admin.SimpleListFilter):
    """Who prepared it, worded as everywhere else: "agent (Claude Code) for user:alice" is one
    choice, the person's configured agent another."""

    title = "prepared by"
    parameter_name = "agent"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        seen = (
            model_admin.get_queryset(request)
            .order_by()
            .values_list("actor_id", "credential", "credential_name")
            .distinct()
        )
        choices = {
            f"{actor}|{credential or ''}": acted_by(
                PreparedAction(actor_id=actor, credential=credential, credential_name=name)
            )
            for actor, credential, name in seen
        }
        return sorted(choices.items(), key=lambda choice: choice[1])

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if not self.value():
            return queryset
        actor, _, credential = str(self.value()).partition("|")
        if credential:
            return queryset.filter(actor_id=actor, credential=credential)
        return queryset.filter(actor_id=actor, credential__isnull=True)


# A title search matches at most this many records; "a" must not become an IN list of all.
TITLE_MATCH_LIMIT = 50


class RejectForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        help_text="The agent reads this when it asks about the write again; say what is wrong.",
    )


class ApproveForm(forms.Form):
    """The approver's optional note (drawn by the change form's template)."""

    note = forms.CharField(required=False, max_length=2000)


@admin.register(PreparedAction)
class PreparedActionAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    change_form_template = "admin/workflow/preparedaction/change_form.html"
    list_display = ["created_at", "summary", "state_shown", "prepared_by", "reason"]
    list_filter = [PendingFilter, AgentFilter, "operation", "state", "created_at", "workspace"]
    search_fields = ["=id", "actor_id", "credential_name", "decision_reason", "clarification"]
    list_display_links = ["summary"]  # the date alone would say nothing
    show_full_result_count = False
    actions = ["approve_selected", "reject_selected"]
    pages = {"approve": "approve", "reject": "reject", "dismiss": "dismiss"}
    decision = ("state", "stale_reason", "decided_by", "decided_at", "decision_note")
    identifiers = ("id", "operation", "workspace", "expiry")
    stored = ("arguments_json", "evidence_json", "preview_json", "result_json")
    fieldsets = [
        ("Decision", {"fields": decision}),
        ("Identifiers", {"fields": identifiers}),
        (
            "Stored JSON (for diagnosis; the review above says the same in words)",
            {"classes": ["collapse"], "fields": stored},
        ),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PreparedAction]:
        # Pending first, then newest: the queue is what a person opens this page for.
        pending_first = Case(
            When(state=ActionState.AWAITING_APPROVAL, then=Value(0)),
            default=Value(1),
            output_field=IntegerField(),
        )
        return super().get_queryset(request).order_by(pending_first, "-created_at")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[PreparedAction], search_term: str
    ) -> tuple[QuerySet[PreparedAction], bool]:
        """Also by title: the writes whose arguments name a record titled (or aliased) so, or
        carry the title themselves (a new record, an import's rows)."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if not term:
            return found, duplicates
        titled = Q(arguments__icontains=term)
        for record_id in records_titled(request, term, TITLE_MATCH_LIMIT):
            titled |= Q(arguments__icontains=record_id)
        return found | queryset.filter(titled), duplicates

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[QueueChangeList]:
        return QueueChangeList

    def has_approve_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("workflow.change_preparedaction")

    @admin.display(description="what it would write")
    def summary(self, obj: PreparedAction) -> str:
        return str(getattr(obj, "anchor_summary", "") or obj.operation)

    @admin.display(description="state", ordering="state")
    def state_shown(self, obj: PreparedAction) -> str:
        return state_badge(obj.state)

    @admin.display(description="prepared by", ordering="actor_id")
    def prepared_by(self, obj: PreparedAction) -> str:
        return acted_by(obj)

    @admin.display(description="stated reason")
    def reason(self, obj: PreparedAction) -> str:
        # Whole: the list wraps it (anchor_styles.html), and a cut reason hides its point.
        return obj.decision_reason

    @admin.display(description="why it can no longer apply")
    def stale_reason(self, obj: PreparedAction) -> str:
        return obj.stale_reason or "—"

    @admin.display(description="expires")
    def expiry(self, obj: PreparedAction) -> str:
        """What expires, and when: only the agent's commit has a deadline. Once a write waits
        for a person it does not expire; approving checks it against the records as they are."""
        at = obj.expires_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        if obj.state == ActionState.PREPARED:
            if obj.expires_at <= timezone.now():
                return f"Expired at {at}: the agent's commit is now refused; it must prepare again."
            return f"The agent must commit it by {at}; after that a commit is refused."
        if obj.state == ActionState.AWAITING_APPROVAL:
            return (
                f"Does not expire while it awaits a person (the agent's deadline to commit, "
                f"{at}, was met). Approving re-checks it against the records as they are now."
            )
        return f"Nothing expires: the write is {obj.get_state_display().lower()}."

    evidence_json = stored_json("evidence", "cited reviews, as stored", fold_over=0)
    preview_json = stored_json("preview", "preview, as stored", fold_over=0)
    arguments_json = stored_json("arguments", "arguments, as stored", fold_over=0)
    result_json = stored_json("result", "stored result", fold_over=0)

    # --- deciding ----------------------------------------------------------------------------

    def _approve(self, request: HttpRequest, action_id: str, note: str = "") -> None:
        """Approve one write; the message names it in words ("update Kirat: stage = offer")."""
        action = PreparedAction.objects.filter(pk=action_id).first()
        described = action_review(action)["summary"] if action is not None else ""
        summary = f"“{described}”" if action is not None else action_id
        try:
            approve_prepared_action(
                action_id=action_id, reviewer=actor_for(request), note=note, described=described
            )
        except AnchorError as exc:
            stale = PreparedAction.objects.filter(pk=action_id).values_list(
                "stale_reason", flat=True
            )
            why = stale.first() or exc.message
            self.message_user(
                request, f"Not applied, nothing was written: {summary}: {why}", messages.ERROR
            )
        else:
            self.message_user(request, f"Approved and applied: {summary}.", messages.SUCCESS)

    @admin.action(description="Approve and apply selected actions", permissions=["approve"])
    def approve_selected(self, request: HttpRequest, queryset: QuerySet[PreparedAction]) -> None:
        chosen = list(
            queryset.filter(state=ActionState.AWAITING_APPROVAL)
            .order_by("created_at")
            .values_list("pk", flat=True)
        )
        for action_id in chosen:
            # An earlier approval in this loop may have made this one stale; it then says so.
            self._approve(request, action_id)

    @admin.action(description="Reject selected actions with one reason", permissions=["approve"])
    def reject_selected(
        self, request: HttpRequest, queryset: QuerySet[PreparedAction]
    ) -> HttpResponse | None:
        chosen = list(queryset.filter(state=ActionState.AWAITING_APPROVAL).order_by("created_at"))
        form = RejectForm(request.POST if "reason" in request.POST else None)
        if form.is_bound and form.is_valid():
            for action in chosen:
                self._reject(request, action, form.cleaned_data["reason"])
            return None
        return admin_page(
            self,
            request,
            "admin/workflow/preparedaction/reject_selected.html",
            title=f"Reject {len(chosen)} write{'s' if len(chosen) != 1 else ''}?",
            chosen=[(a, action_review(a)["summary"]) for a in chosen],
            reject_form=form,
            preserved_filters=self.get_preserved_filters(request),
        )

    def _reject(self, request: HttpRequest, action: PreparedAction, reason: str) -> None:
        summary = action_review(action)["summary"]
        try:
            reject_prepared_action(action_id=action.pk, reviewer=actor_for(request), reason=reason)
        except AnchorError as exc:
            self.message_user(request, f"Not rejected: “{summary}”: {exc.message}", messages.ERROR)
        else:
            self.message_user(request, f"Rejected “{summary}”.", messages.SUCCESS)

    def _next_waiting(self, request: HttpRequest, decided: PreparedAction) -> HttpResponse:
        """The next write awaiting a decision in the list the reviewer came from (its filters,
        search and sort kept); the decided write's own page when none is left."""
        filters = self.get_preserved_filters(request)
        listed = request.GET.get("_changelist_filters", "")
        as_listed = copy(request)
        as_listed.GET = QueryDict(listed)
        try:
            changelist = self.get_changelist_instance(as_listed)
            waiting = changelist.get_queryset(as_listed)
        except (IncorrectLookupParameters, DisallowedModelAdminLookup):
            waiting = self.get_queryset(request)
        following = (
            waiting.filter(state=ActionState.AWAITING_APPROVAL).exclude(pk=decided.pk).first()
        )
        target = following or decided
        url = reverse("admin:workflow_preparedaction_change", args=[target.pk])
        return HttpResponseRedirect(
            add_preserved_filters({"preserved_filters": filters, "opts": self.opts}, url)
        )

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        action = self.get_object(request, object_id)
        if action.state == ActionState.AWAITING_APPROVAL:
            # Found stale now rather than when someone presses Approve.
            mark_stale_pending(action.workspace_id, [action.pk])
            action.refresh_from_db()
        extra_context = dict(extra_context or {})
        extra_context.update(
            can_decide=self.has_approve_permission(request),
            review=action_review(action),
            action=action,
            states=ActionState,  # so the templates compare with the enum, not bare strings
        )
        return super().change_view(request, object_id, form_url, extra_context)

    def approve_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST" or not self.has_approve_permission(request):
            raise PermissionDenied
        action = self.get_object(request, object_id)  # another workspace's action is a 404
        form = ApproveForm(request.POST)
        note = form.cleaned_data["note"] if form.is_valid() else ""
        if not request.POST.get("anyway"):
            # Told first when approving would make another waiting write stale.
            summary = action_review(action)["summary"]
            undone = stale_if_approved(action.pk, described=summary)
            if undone:
                others = PreparedAction.objects.in_bulk([pk for pk, _ in undone])
                return admin_page(
                    self,
                    request,
                    "admin/workflow/preparedaction/approve_confirm.html",
                    title="Approving this makes other waiting writes stale",
                    original=action,
                    summary=summary,
                    note=note,
                    undone=[
                        {
                            "summary": action_review(others[pk])["summary"],
                            "url": reverse("admin:workflow_preparedaction_change", args=[pk]),
                            "reason": reason,
                        }
                        for pk, reason in undone
                        if pk in others
                    ],
                    change_url=reverse("admin:workflow_preparedaction_change", args=[action.pk]),
                )
        self._approve(request, action.pk, note)
        return self._next_waiting(request, action)

    def dismiss_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Set a stale write aside once a person has read why it did not happen."""
        if request.method != "POST" or not self.has_approve_permission(request):
            raise PermissionDenied
        action = self.get_object(request, object_id)  # another workspace's action is a 404
        try:
            dismiss_stale_action(action_id=action.pk, reviewer=actor_for(request))
        except AnchorError as exc:
            self.message_user(request, f"Not dismissed: {exc.message}", messages.ERROR)
        else:
            summary = action_review(action)["summary"]
            self.message_user(request, f"Dismissed the stale write “{summary}”.", messages.SUCCESS)
        back = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(back, {request.get_host()}):
            back = reverse("admin:workflow_preparedaction_change", args=[action.pk])
        return HttpResponseRedirect(back)

    def reject_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if not self.has_approve_permission(request):
            raise PermissionDenied
        action = self.get_object(request, object_id)
        change_url = reverse("admin:workflow_preparedaction_change", args=[action.pk])
        form = RejectForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            self._reject(request, action, form.cleaned_data["reason"])
            return self._next_waiting(request, action)
        return admin_page(
            self,
            request,
            "admin/workflow/preparedaction/reject.html",
            title="Reject this write?",
            original=action,
            reject_form=form,
            change_url=change_url,
            preserved_filters=self.get_preserved_filters(request),
        )


@admin.register(ReviewTicket)
class ReviewTicketAdmin(ReadOnlyAdmin):
    """What an agent looked at before writing, and the counters that make it stale."""

    workspace_path = "workspace"

    list_display = ["created_at", "kind", "actor_id", "asked", "expires_at"]
    list_filter = ["kind", "created_at", "workspace"]
    search_fields = ["=id", "actor_id"]
    show_full_result_count = False
    fields = ["id", "kind", "actor_id", "workspace", "created_at", "expires_at"]
    fields += ["request_json", "answer_json", "counters_json"]

    @admin.display(description="asked")
    def asked(self, obj: ReviewTicket) -> str:
        request = obj.request if isinstance(obj.request, dict) else {}
        return str(request.get("query") or request.get("name") or "")[:80]

    request_json = stored_json("request", "request")
    answer_json = stored_json("answer", "answer")
    counters_json = stored_json("counters", "counters it depends on")
