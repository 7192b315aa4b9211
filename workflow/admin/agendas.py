"""Agendas in the admin, read-only: the tree with states and conclusions, health, event history.

Agendas change only through the agent's tools (every change is token-checked and sealed in the
event chain), so people read here and never edit; the health check runs on each change page.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html

from records.admin.common import ChoicesFilter, ReadOnlyAdmin, json_block, stored_json
from workflow.agendas.health import check_health
from workflow.agendas.presentation import whole_picture
from workflow.models.agendas import Agenda, AgendaConclusion, AgendaEvent

PARTS = "admin/workflow/agenda/"
OPEN, UNSYNCED = Q(status__in=[Agenda.ACTIVE, Agenda.PAUSED]), Q(sync_state=Agenda.SYNC_PENDING)


class AgendaAttentionFilter(ChoicesFilter):
    """What the dashboard lists: agendas still open, or whose outcomes are not yet synced."""

    title = "needs following up"
    parameter_name = "attention"
    options = {
        "open_or_unsynced": ("Open, or outcomes not yet synced", OPEN | UNSYNCED),
        "open": ("Open (active or paused)", OPEN),
        "unsynced": ("Outcomes not yet synced to records", UNSYNCED),
    }


@admin.register(Agenda)
class AgendaAdmin(ReadOnlyAdmin):
    workspace_path = "workspace"
    list_display = ["title", "status", "revision", "actor_id", "sync_state", "updated_at"]
    list_filter = [AgendaAttentionFilter, "status", "sync_state", "updated_at", "workspace"]
    search_fields = ["=id", "title", "actor_id"]
    show_full_result_count = False
    list_per_page = 50
    fieldsets = [
        (None, {"fields": ["title", "status", "revision", "actor_id", "workspace"]}),
        ("Where it stands", {"fields": ["tree", "pending_presentation_id", "closing_note"]}),
        ("Conclusions (every revision)", {"fields": ["conclusion_history"]}),
        ("Health", {"fields": ["health"]}),
        ("Event history", {"fields": ["event_history"]}),
        ("Bound records", {"fields": ["bound_collection", "sync_state"]}),
        ("When", {"fields": ["created_at", "updated_at", "closed_at", "id"]}),
    ]

    @admin.display(description="whole picture")
    def tree(self, obj: Agenda) -> str:
        picture = whole_picture(obj, unfold_all=True)
        return format_html('<pre class="anchor-json">{}</pre>', picture["text"])

    @admin.display(description="conclusions, reasons and syntheses, oldest first")
    def conclusion_history(self, obj: Agenda) -> str:
        rows = AgendaConclusion.objects.filter(item__layer__agenda=obj)
        conclusions = rows.select_related("item__layer").order_by("created_at", "id")
        return render_to_string(f"{PARTS}conclusions.html", {"conclusions": conclusions})

    @admin.display(description="health check (structure, event chain, seal)")
    def health(self, obj: Agenda) -> str:
        return render_to_string(f"{PARTS}health.html", check_health(obj))

    @admin.display(description="events")
    def event_history(self, obj: Agenda) -> str:
        events = AgendaEvent.objects.filter(agenda=obj).order_by("sequence")
        url = reverse("admin:workflow_agendaevent_changelist") + f"?agenda__id__exact={obj.pk}"
        shown = [(event, json_block(event.payload)) for event in events]
        return render_to_string(f"{PARTS}events.html", {"events": shown, "list_url": url})


@admin.register(AgendaEvent)
class AgendaEventAdmin(ReadOnlyAdmin):
    workspace_path = "agenda__workspace"
    list_display = ["created_at", "agenda", "sequence", "kind", "actor_id"]
    list_filter = ["kind", "created_at"]
    list_select_related = ["agenda"]
    raw_id_fields = ["agenda"]
    search_fields = ["=agenda__id", "agenda__title", "actor_id"]
    show_full_result_count = False
    fields = ["agenda", "sequence", "kind", "actor_id", "created_at", "payload_json"]
    fields += ["state_hash", "previous_hash", "event_hash"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgendaEvent]:
        return super().get_queryset(request).order_by("-created_at", "-id")

    payload_json = stored_json("payload", "payload", fold_over=3000)
