"""The audit trail, record versions and revision counters: read-only, filterable, scannable.

The one thing a person adds here is a verdict on an agent-reported clarification (confirmed or
disputed). It goes through records.services, which keeps the verdict beside the append-only event
and audits the verdict itself.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from records.admin.common import ReadOnlyAdmin, admin_context, json_block, report_refusal
from records.admin.timeline import readable_kind
from records.errors import AnchorError
from records.models import AuditEvent, ClarificationReview, RecordVersion, RevisionCounter
from records.services import clarification_review_create


class HasClarificationFilter(admin.SimpleListFilter):
    title = "agent-reported clarification"
    parameter_name = "clarification"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("any", "Has one"),
            ("unreviewed", "Has one, not yet reviewed"),
            ("confirmed", "Confirmed by a person"),
            ("disputed", "Disputed by a person"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        queryset = queryset.exclude(agent_reported_clarification="")
        if value == "unreviewed":
            return queryset.filter(verdict__isnull=True)
        if value in (ClarificationReview.CONFIRMED, ClarificationReview.DISPUTED):
            return queryset.filter(verdict=value)
        return queryset


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _subject(event: AuditEvent) -> str:
    """What the event is about, linked: the record (a link event names its type and target),
    else the collection, else the bare entity."""
    state = event.after if isinstance(event.after, dict) else event.before
    state = state if isinstance(state, dict) else {}
    if event.entity_type == "relationship":
        label = f"link {state.get('relationship_type', '')} → {state.get('target_title', '')}"
    else:
        label = str(state.get("title") or state.get("name") or "")
    if event.record_id:
        url = reverse("admin:records_record_change", args=[event.record_id])
        return format_html('<a href="{}">{}</a>', url, label or event.record_id)
    if event.collection_id:
        url = reverse("admin:records_collection_change", args=[event.collection_id])
        return format_html('<a href="{}">{}</a>', url, label or event.collection_id)
    return label or f"{event.entity_type} {event.entity_id}"


# The review evidence key under which the workflow keeps an answer the user gave in the
# client's own dialog (MCP elicitation): it came from the client, not from the agent's text.
CLIENT_CONFIRMATION = "user_confirmed_in_client"


def client_confirmations(event: AuditEvent) -> list[dict[str, Any]]:
    return [
        e[CLIENT_CONFIRMATION]
        for e in event.review_evidence or []
        if isinstance(e, dict) and isinstance(e.get(CLIENT_CONFIRMATION), dict)
    ]


def _client_confirmation_html(confirmation: dict[str, Any], limit: int) -> str:
    client = confirmation.get("client") or {}
    said_by = " ".join(str(client.get(k) or "") for k in ("name", "version")).strip()
    return format_html(
        '<span class="anchor-badge anchor-ok">user-confirmed in the client</span> “{}” '
        '<span class="anchor-muted">{} · {} · asked: {}</span>',
        _shorten(str(confirmation.get("answer", "")), limit),
        said_by or "unnamed client",
        str(confirmation.get("at", ""))[:19].replace("T", " "),
        _shorten(str(confirmation.get("question", "")), limit),
    )


def clarification_html(
    event: AuditEvent, verdict: str | None, review_url: str = "", limit: int = 2000
) -> str:
    """What the user is said to have told: answers from the client's dialog, labelled
    user-confirmed in the client, apart from the agent-reported text."""
    confirmed = [_client_confirmation_html(c, limit) for c in client_confirmations(event)]
    if not event.agent_reported_clarification.strip():
        return mark_safe("<br>".join(confirmed)) if confirmed else "—"  # each part escaped
    badge = mark_safe(  # constant markup, no user text
        {
            ClarificationReview.CONFIRMED: '<span class="anchor-badge anchor-ok">confirmed</span>',
            ClarificationReview.DISPUTED: '<span class="anchor-badge anchor-bad">disputed</span>',
        }.get(verdict or "", '<span class="anchor-badge">not reviewed</span>')
    )
    review = format_html(' <a href="{}">review</a>', review_url) if review_url else ""
    reported = format_html(
        '<span class="anchor-badge anchor-agent">agent-reported</span> “{}” {}{}',
        _shorten(event.agent_reported_clarification, limit),
        badge,
        review,
    )
    return mark_safe("<br>".join([*confirmed, reported]))  # each part escaped


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    list_display = ["created_at", "what", "actor", "subject", "reason", "clarification"]
    list_filter = [
        HasClarificationFilter,
        "kind",
        "actor_id",
        "entity_type",
        "created_at",
        "workspace",
    ]
    search_fields = [
        "=record_id",
        "=collection_id",
        "=entity_id",
        "=action_id",
        "actor_id",
        "decision_reason",
        "agent_reported_clarification",
    ]
    show_full_result_count = False
    list_per_page = 50
    actions = ["confirm_clarifications", "dispute_clarifications"]
    fieldsets = [
        (None, {"fields": ["created_at", "kind", "actor", "subject", "workspace"]}),
        ("Why", {"fields": ["decision_reason", "clarification_detail", "evidence"]}),
        ("What changed", {"fields": ["before_json", "after_json"]}),
        (
            "Identifiers",
            {
                "fields": [
                    "entity_type",
                    "entity_id",
                    "record_id",
                    "collection_id",
                    "action_id",
                    "item_index",
                    "id",
                ]
            },
        ),
    ]
    readonly_fields = [
        "created_at",
        "kind",
        "actor",
        "subject",
        "workspace",
        "decision_reason",
        "clarification_detail",
        "evidence",
        "before_json",
        "after_json",
        "entity_type",
        "entity_id",
        "record_id",
        "collection_id",
        "action_id",
        "item_index",
        "id",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        # The standing verdict rides along as a subquery so the list costs one query per page.
        latest = ClarificationReview.objects.filter(audit_event=OuterRef("pk")).order_by(
            "-created_at", "-id"
        )
        return super().get_queryset(request).annotate(verdict=Subquery(latest.values("state")[:1]))

    def has_review_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("records.add_clarificationreview")

    @admin.display(description="event", ordering="kind")
    def what(self, obj: AuditEvent) -> str:
        return readable_kind(obj.kind)

    @admin.display(description="actor", ordering="actor_id")
    def actor(self, obj: AuditEvent) -> str:
        who = "person" if obj.actor_id.startswith("user:") else "agent or process"
        return format_html('{}<br><span class="anchor-muted">({})</span>', obj.actor_id, who)

    @admin.display(description="about")
    def subject(self, obj: AuditEvent) -> str:
        return _subject(obj)

    @admin.display(description="stated reason")
    def reason(self, obj: AuditEvent) -> str:
        return _shorten(obj.decision_reason, 90)

    @admin.display(description="clarification")
    def clarification(self, obj: AuditEvent) -> str:
        return clarification_html(obj, getattr(obj, "verdict", None), limit=90)

    @admin.display(description="clarification (agent-reported text is unverified by the server)")
    def clarification_detail(self, obj: AuditEvent) -> str:
        url = reverse("admin:records_auditevent_review", args=[obj.pk])
        return clarification_html(obj, getattr(obj, "verdict", None), url)

    @admin.display(description="review evidence")
    def evidence(self, obj: AuditEvent) -> str:
        return json_block(obj.review_evidence or None)

    @admin.display(description="before")
    def before_json(self, obj: AuditEvent) -> str:
        return json_block(obj.before)

    @admin.display(description="after")
    def after_json(self, obj: AuditEvent) -> str:
        return json_block(obj.after)

    # --- clarification verdicts --------------------------------------------------------------

    def _review_many(
        self, request: HttpRequest, queryset: QuerySet[AuditEvent], state: str
    ) -> None:
        done = 0
        for event in queryset.exclude(agent_reported_clarification=""):
            ctx = admin_context(request, event.workspace_id, f"Clarification marked {state}.")
            try:
                clarification_review_create(ctx=ctx, event_id=event.pk, state=state)
            except AnchorError as exc:
                report_refusal(self, request, exc)
                continue
            done += 1
        self.message_user(request, f"Marked {done} clarification(s) {state}.", messages.SUCCESS)

    @admin.action(
        description="Mark agent-reported clarifications as confirmed", permissions=["review"]
    )
    def confirm_clarifications(self, request: HttpRequest, queryset: QuerySet[AuditEvent]) -> None:
        self._review_many(request, queryset, ClarificationReview.CONFIRMED)

    @admin.action(
        description="Mark agent-reported clarifications as disputed", permissions=["review"]
    )
    def dispute_clarifications(self, request: HttpRequest, queryset: QuerySet[AuditEvent]) -> None:
        self._review_many(request, queryset, ClarificationReview.DISPUTED)

    def get_urls(self) -> list[Any]:
        review = path(
            "<int:event_id>/review-clarification/",
            self.admin_site.admin_view(self.review_view),
            name="records_auditevent_review",
        )
        return [review, *super().get_urls()]

    def review_view(self, request: HttpRequest, event_id: int) -> HttpResponse:
        event = self.get_object(request, str(event_id))  # another workspace's event is a 404
        if not self.has_review_permission(request):
            raise PermissionDenied
        form = ClarificationReviewForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            ctx = admin_context(request, event.workspace_id, "Reviewed an agent's clarification.")
            try:
                clarification_review_create(
                    ctx=ctx,
                    event_id=event.pk,
                    state=form.cleaned_data["state"],
                    note=form.cleaned_data["note"],
                )
            except AnchorError as exc:
                report_refusal(self, request, exc)
            else:
                self.message_user(
                    request, f"Clarification marked {form.cleaned_data['state']}.", messages.SUCCESS
                )
            back = (
                reverse("admin:records_record_change", args=[event.record_id])
                if event.record_id
                else reverse("admin:records_auditevent_change", args=[event.pk])
            )
            return HttpResponseRedirect(back)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Review an agent-reported clarification",
            "event": event,
            "subject": _subject(event),
            "form": form,
            "reviews": event.clarification_reviews.all(),
        }
        return TemplateResponse(
            request, "admin/records/auditevent/review_clarification.html", context
        )


class ClarificationReviewForm(forms.Form):
    state = forms.ChoiceField(
        choices=ClarificationReview.STATES,
        widget=forms.RadioSelect,
        help_text="Confirmed: the user did say this. Disputed: the user did not, or meant "
        "something else.",
    )
    note = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3, "cols": 70})
    )


@admin.register(ClarificationReview)
class ClarificationReviewAdmin(ReadOnlyAdmin):
    """The trail of verdicts; new ones are given from the audit event or the record page."""

    workspace_path = "workspace"

    list_display = ["created_at", "state", "reviewer_id", "event_link", "note"]
    list_filter = ["state", "created_at", "workspace"]
    list_select_related = ["audit_event"]
    search_fields = ["reviewer_id", "note", "=audit_event__record_id"]

    @admin.display(description="audit event")
    def event_link(self, obj: ClarificationReview) -> str:
        url = reverse("admin:records_auditevent_change", args=[obj.audit_event_id])
        return format_html('<a href="{}">{}</a>', url, obj.audit_event)


@admin.register(RecordVersion)
class RecordVersionAdmin(ReadOnlyAdmin):
    workspace_path = "record__workspace"
    list_display = ["record_link", "version", "title", "actor_id", "recorded_at", "archived"]
    list_filter = ["recorded_at"]
    list_select_related = ["record"]
    search_fields = ["=record__id", "title", "actor_id"]
    show_full_result_count = False
    readonly_fields = [
        "record_link",
        "version",
        "title",
        "data_json",
        "aliases",
        "archived_at",
        "actor_id",
        "recorded_at",
    ]
    fields = tuple(readonly_fields)

    @admin.display(description="record")
    def record_link(self, obj: RecordVersion) -> str:
        url = reverse("admin:records_record_change", args=[obj.record_id])
        return format_html('<a href="{}">{}</a>', url, obj.record.title)

    @admin.display(description="archived", boolean=True)
    def archived(self, obj: RecordVersion) -> bool:
        return obj.archived_at is not None

    @admin.display(description="data")
    def data_json(self, obj: RecordVersion) -> str:
        return json_block(obj.data, fold_over=4000)


@admin.register(RevisionCounter)
class RevisionCounterAdmin(ReadOnlyAdmin):
    """Kept by database triggers; shown so a person can see why an agent's review went stale."""

    workspace_path = "workspace"

    list_display = ["key", "value", "workspace"]
    list_filter = ["workspace"]
    search_fields = ["key"]
    show_full_result_count = False
