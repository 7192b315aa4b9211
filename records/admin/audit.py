"""The audit trail, record versions and revision counters: read-only, filterable, scannable. A
person adds only a verdict on an agent-reported clarification, through records.services."""

from __future__ import annotations

import html
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, strip_tags

from records.acting import acted_by, by_person
from records.admin.common import (
    ChoicesFilter,
    ReadOnlyAdmin,
    admin_context,
    admin_page,
    json_block,
    report_refusal,
    shorten,
    stored_json,
    write_each,
)
from records.admin.scoping import records_titled
from records.admin.timeline import HEADLINES, clarifications, event_changes, readable_kind
from records.errors import AnchorError
from records.models import (
    AuditEvent,
    ClarificationReview,
    Collection,
    Record,
    RecordVersion,
    RevisionCounter,
)
from records.services import clarification_review_create

_REPORTED = ~Q(agent_reported_clarification="")


class HasClarificationFilter(ChoicesFilter):
    title = "agent-reported clarification"
    parameter_name = "clarification"
    options = {
        "any": ("Has one", _REPORTED),
        "unreviewed": ("Has one, not yet reviewed", _REPORTED & Q(verdict__isnull=True)),
        "confirmed": (
            "Confirmed by a person",
            _REPORTED & Q(verdict=ClarificationReview.CONFIRMED),
        ),
        "disputed": ("Disputed by a person", _REPORTED & Q(verdict=ClarificationReview.DISPUTED)),
    }


class EventKindFilter(ChoicesFilter):
    """The kinds of event by the names the lists show ("Data updated", not record.updated)."""

    title = "event"
    parameter_name = "kind"
    options = {
        kind: (label, Q(kind=kind)) for kind, label in sorted(HEADLINES.items(), key=lambda k: k[1])
    }


# Records whose title or alias matches a search term, at most this many: a search of "a" must
# not turn into an IN list of every record.
RECORD_MATCH_LIMIT = 500


def with_titles(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """The record's title and the collection's name, as subqueries: a list of events then
    names every record however the event says it, in the one query of the page."""
    title = Record.objects.filter(pk=OuterRef("record_id")).values("title")[:1]
    name = Collection.objects.filter(pk=OuterRef("collection_id")).values("name")[:1]
    return events.annotate(record_title=Subquery(title), collection_name=Subquery(name))


def event_subject(event: AuditEvent) -> str:
    """What the event is about, linked: the record (a link event names its type and target),
    else the collection, else the bare entity."""
    state = event.after if isinstance(event.after, dict) else event.before
    state = state if isinstance(state, dict) else {}
    if event.entity_type == "relationship":
        label = f"link {state.get('relationship_type', '')} → {state.get('target_title', '')}"
    else:
        label = str(state.get("title") or state.get("name") or "")
    # An approval, a verdict or a link names its record only by ID: show the record's title.
    label = label or str(getattr(event, "record_title", "") or "")
    if not event.record_id:
        label = label or str(getattr(event, "collection_name", "") or "")
    if event.record_id:
        url = reverse("admin:records_record_change", args=[event.record_id])
        return format_html('<a href="{}">{}</a>', url, label or event.record_id)
    if event.collection_id:
        url = reverse("admin:records_collection_change", args=[event.collection_id])
        return format_html('<a href="{}">{}</a>', url, label or event.collection_id)
    return label or f"{event.entity_type} {event.entity_id}"


def clarification_html(event: AuditEvent, *, brief: bool = False) -> str:
    """What the user is said to have told, each with its source (records/clarifications.html),
    and the standing verdict on the agent's account (get_queryset's `verdict`)."""
    url = reverse("admin:records_auditevent_review", args=[event.pk])
    verdict = getattr(event, "verdict", None)
    shown = clarifications(event.review_evidence, event.agent_reported_clarification, verdict, url)
    if not shown:
        return "—"
    return render_to_string(
        "records/clarifications.html", {"clarifications": shown, "brief": brief}
    )


def _named_link(url_name: str, pk: str, label: str) -> str:
    """The row's name linked to its page, with its ID beside it; a dash when there is none."""
    if not pk:
        return "—"
    url = reverse(url_name, args=[pk])
    return format_html('<a href="{}">{}</a> <span class="anchor-muted">{}</span>', url, label, pk)


def _mark_clarifications(state: str) -> Any:
    """The list action giving each selected event's agent-reported clarification a verdict."""

    @admin.action(
        description=f"Mark agent-reported clarifications as {state}", permissions=["review"]
    )
    def mark(model_admin: Any, request: HttpRequest, queryset: QuerySet[AuditEvent]) -> None:
        def review(event: AuditEvent) -> None:
            ctx = admin_context(request, event.workspace_id, f"Clarification marked {state}.")
            clarification_review_create(ctx=ctx, event_id=event.pk, state=state)

        reported = queryset.exclude(agent_reported_clarification="")
        done = write_each(model_admin, request, reported, review)
        model_admin.message_user(
            request, f"Marked {done} clarification(s) {state}.", messages.SUCCESS
        )

    return mark


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    list_display = ["created_at", "what", "actor", "subject", "reason", "clarification"]
    list_filter = [
        HasClarificationFilter,
        EventKindFilter,
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
        "credential_name",
        "decision_reason",
        "agent_reported_clarification",
    ]
    show_full_result_count = False
    list_per_page = 50
    actions = ["confirm_clarifications", "dispute_clarifications"]
    pages = {"review": "review-clarification"}
    fieldsets = [
        (None, {"fields": ["created_at", "what", "actor", "subject", "workspace"]}),
        ("What changed", {"fields": ["changes"]}),
        ("Why", {"fields": ["decision_reason", "clarification_detail", "evidence"]}),
        (
            "Stored states, as JSON",
            {"classes": ["collapse"], "fields": ["before_json", "after_json"]},
        ),
        (
            "Identifiers",
            {
                "fields": [
                    "record_named",
                    "collection_named",
                    "action_named",
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

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """Name the page in words: "Data updated: Kirat", not "record.updated record <id>"."""
        event = self.get_object(request, object_id)
        subject = html.unescape(strip_tags(event_subject(event)))  # the template escapes
        subtitle = f"{readable_kind(event.kind)}: {subject}"
        extra_context = {**(extra_context or {}), "subtitle": subtitle}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        # The standing verdict rides along as a subquery so the list costs one query per page.
        latest = ClarificationReview.objects.filter(audit_event=OuterRef("pk")).order_by(
            "-created_at", "-id"
        )
        verdict = Subquery(latest.values("state")[:1])
        events = super().get_queryset(request).annotate(verdict=verdict)
        return with_titles(events)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[AuditEvent], search_term: str
    ) -> tuple[QuerySet[AuditEvent], bool]:
        """Also the events of every record whose title or alias holds the term ("Kirat" finds
        what happened to Kirat, not only the events whose reason says Kirat)."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if not term:
            return found, duplicates
        ids = records_titled(request, term, RECORD_MATCH_LIMIT)
        return found | queryset.filter(record_id__in=ids), duplicates

    def has_review_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("records.add_clarificationreview")

    @admin.display(description="event", ordering="kind")
    def what(self, obj: AuditEvent) -> str:
        return readable_kind(obj.kind)

    @admin.display(description="actor", ordering="actor_id")
    def actor(self, obj: AuditEvent) -> str:
        if obj.credential:
            return acted_by(obj)  # says "agent … for …" itself
        who = "person" if by_person(obj) else "agent or process"
        return format_html('{}<br><span class="anchor-muted">({})</span>', obj.actor_id, who)

    @admin.display(description="about")
    def subject(self, obj: AuditEvent) -> str:
        return event_subject(obj)

    @admin.display(description="stated reason")
    def reason(self, obj: AuditEvent) -> str:
        return shorten(obj.decision_reason, 90)

    @admin.display(description="clarification")
    def clarification(self, obj: AuditEvent) -> str:
        return clarification_html(obj, brief=True)

    @admin.display(description="clarification (agent-reported text is unverified by the server)")
    def clarification_detail(self, obj: AuditEvent) -> str:
        return clarification_html(obj)

    @admin.display(description="review evidence")
    def evidence(self, obj: AuditEvent) -> str:
        return json_block(obj.review_evidence or None)

    @admin.display(description="what changed")
    def changes(self, obj: AuditEvent) -> str:
        rows = event_changes(obj)
        if not rows:
            return "Nothing changed field by field (see the stored states below)."
        context = {"changes": rows, "table_id": "event-changes"}
        return render_to_string("records/changes.html", context)

    @admin.display(description="record")
    def record_named(self, obj: AuditEvent) -> str:
        title = getattr(obj, "record_title", None) or "(no such record now)"
        return _named_link("admin:records_record_change", obj.record_id, title)

    @admin.display(description="collection")
    def collection_named(self, obj: AuditEvent) -> str:
        name = getattr(obj, "collection_name", None) or "(no such collection now)"
        return _named_link("admin:records_collection_change", obj.collection_id, name)

    @admin.display(description="agent's write")
    def action_named(self, obj: AuditEvent) -> str:
        if not obj.action_id:
            return "—"
        # By URL name: the store does not import the workflow that owns prepared actions.
        url = reverse("admin:workflow_preparedaction_change", args=[obj.action_id])
        return format_html('<a href="{}">the prepared write this came from</a>', url)

    before_json = stored_json("before", "before")
    after_json = stored_json("after", "after")

    # --- clarification verdicts --------------------------------------------------------------

    confirm_clarifications = _mark_clarifications(ClarificationReview.CONFIRMED)
    dispute_clarifications = _mark_clarifications(ClarificationReview.DISPUTED)

    def review_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        event = self.get_object(request, object_id)  # another workspace's event is a 404
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
        return admin_page(
            self,
            request,
            "admin/records/auditevent/review_clarification.html",
            title="Review an agent-reported clarification",
            event=event,
            subject=event_subject(event),
            form=form,
            reviews=event.clarification_reviews.all(),
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
    fields = ["record_link", "version", "title", "data_json", "aliases", "archived_at"]
    fields += ["actor_id", "recorded_at"]

    @admin.display(description="record")
    def record_link(self, obj: RecordVersion) -> str:
        url = reverse("admin:records_record_change", args=[obj.record_id])
        return format_html('<a href="{}">{}</a>', url, obj.record.title)

    @admin.display(description="archived", boolean=True)
    def archived(self, obj: RecordVersion) -> bool:
        return obj.archived_at is not None

    data_json = stored_json("data", "data", fold_over=4000)


@admin.register(RevisionCounter)
class RevisionCounterAdmin(ReadOnlyAdmin):
    """Kept by database triggers; shown so a person can see why an agent's review went stale."""

    workspace_path = "workspace"

    list_display = ["key", "value", "workspace"]
    list_filter = ["workspace"]
    search_fields = ["key"]
    show_full_result_count = False
