"""Agendas: frozen numbered lists an agent works through item by item, and their event log. A
stack of layers (root, child lists, interruptions) whose items never change number or text; the
logic lives in workflow/agendas/.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from records.ids import new_id
from records.models import Collection, Record, Workspace


class Agenda(models.Model):
    ACTIVE = "active"
    PAUSED = "paused"
    FINISHED = "finished"
    ABANDONED = "abandoned"
    STATUS_CHOICES = [(s, s.capitalize()) for s in (ACTIVE, PAUSED, FINISHED, ABANDONED)]
    CLOSED = (FINISHED, ABANDONED)

    SYNC_NOT_BOUND = "not_bound"
    SYNC_PENDING = "pending"
    SYNC_DONE = "synced"
    SYNC_CONFLICTS = "synced_with_conflicts"
    SYNC_CHOICES = [
        (SYNC_NOT_BOUND, "No bound records"),
        (SYNC_PENDING, "Outcomes not yet synced to records"),
        (SYNC_DONE, "Outcomes synced to records"),
        (SYNC_CONFLICTS, "Synced; some records changed meanwhile and were left alone"),
    ]

    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    actor_id = models.CharField(max_length=300, help_text="Who started the agenda.")
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=20, choices=STATUS_CHOICES, default=ACTIVE)
    revision = models.PositiveIntegerField(default=0, help_text="Bumped by every mutation.")
    # A fresh random value per revision; the cursor token is derived from it and the cursor
    # position, so tokens survive restarts without a server secret.
    cursor_nonce = models.CharField(max_length=64)
    pending_presentation_id = models.CharField(
        max_length=40, blank=True, default="", help_text="Shown but not yet acknowledged."
    )
    bound_collection = models.ForeignKey(
        Collection, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    sync_state = models.CharField(max_length=30, choices=SYNC_CHOICES, default=SYNC_NOT_BOUND)
    closing_note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    # The last event the agenda's commands have verified (its sequence and hash): the next
    # command re-checks the event log from it on, not from the start (workflow.agendas.health).
    # Not part of the sealed state: it says what was checked, not what the agenda is.
    verified_sequence = models.PositiveIntegerField(default=0)
    verified_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["workspace", "status", "updated_at"], name="agenda_scope")]

    def __str__(self) -> str:
        return self.title

    @property
    def is_closed(self) -> bool:
        return self.status in self.CLOSED


class AgendaLayer(models.Model):
    ROOT = "root"
    CHILD = "child"
    INTERRUPTION = "interruption"
    KIND_CHOICES = [(ROOT, "Root list"), (CHILD, "Child list"), (INTERRUPTION, "Interruption")]

    ACTIVE = "active"
    CLOSED = "closed"
    STATUS_CHOICES = [(ACTIVE, "Active"), (CLOSED, "Closed")]

    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    agenda = models.ForeignKey(Agenda, on_delete=models.CASCADE, related_name="layers")
    sequence = models.PositiveIntegerField(help_text="1 for the root, then in opening order.")
    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    depth = models.PositiveIntegerField()
    label = models.CharField(
        max_length=100, blank=True, help_text="Prefix of item numbers: '', '3.', 'i1.'."
    )
    parent_layer = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="children"
    )
    parent_item = models.ForeignKey(
        "AgendaItem",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="child_layers",
        help_text="The item this layer was opened from (children) or interrupted (interruptions).",
    )
    source_reference = models.TextField(blank=True, default="")
    unverified_reason = models.TextField(blank=True, default="")
    status = models.CharField(max_length=20, choices=STATUS_CHOICES, default=ACTIVE)
    focus_item = models.ForeignKey(
        "AgendaItem", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    outcome = models.TextField(blank=True, default="")
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["agenda", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["agenda", "sequence"], name="agenda_layer_sequence")
        ]

    def __str__(self) -> str:
        return f"{self.kind} layer {self.label or '(root)'}"


class AgendaItem(models.Model):
    OPEN = "open"
    CURRENT = "current"
    COMPLETED = "completed"
    DEFERRED = "deferred"
    BLOCKED = "blocked"
    STATE_CHOICES = [(s, s.capitalize()) for s in (OPEN, CURRENT, COMPLETED, DEFERRED, BLOCKED)]
    RESOLVED = (COMPLETED, DEFERRED, BLOCKED)

    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    layer = models.ForeignKey(AgendaLayer, on_delete=models.CASCADE, related_name="items")
    number = models.PositiveIntegerField()
    text = models.TextField(help_text="Frozen at snapshot time, exactly as given.")
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=OPEN)
    conclusion = models.TextField(blank=True, default="", help_text="Latest conclusion.")
    reason = models.TextField(blank=True, default="", help_text="Why deferred or blocked.")
    awaiting_synthesis = models.BooleanField(
        default=False, help_text="A child layer returned; the parent conclusion must be revised."
    )
    record = models.ForeignKey(
        Record, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    record_fingerprint = models.CharField(max_length=64, blank=True, default="")
    record_version = models.PositiveIntegerField(null=True, blank=True)
    sync_status = models.CharField(max_length=30, blank=True, default="")
    sync_detail = models.JSONField(null=True, blank=True)
    earlier = models.JSONField(
        null=True,
        blank=True,
        help_text="The bound record's deferred or blocked outcome in an earlier agenda.",
    )

    class Meta:
        ordering = ["layer", "number"]
        constraints = [
            models.UniqueConstraint(fields=["layer", "number"], name="agenda_item_number")
        ]

    def __str__(self) -> str:
        return f"{self.layer.label}{self.number}. {self.text[:60]}"

    @property
    def path(self) -> str:
        return f"{self.layer.label}{self.number}"


class AgendaConclusion(models.Model):
    """Every conclusion, synthesis and defer/block reason an item was given, in order."""

    CONCLUSION = "conclusion"
    REVISION = "revision"
    SYNTHESIS = "synthesis"
    DEFERRED = "deferred"
    BLOCKED = "blocked"
    KIND_CHOICES = [
        (CONCLUSION, "Conclusion"),
        (REVISION, "Revised conclusion"),
        (SYNTHESIS, "Synthesis of child outcomes"),
        (DEFERRED, "Deferred"),
        (BLOCKED, "Blocked"),
    ]

    item = models.ForeignKey(AgendaItem, on_delete=models.CASCADE, related_name="conclusions")
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    text = models.TextField()
    agenda_revision = models.PositiveIntegerField()
    actor_id = models.CharField(max_length=300)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["item", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["item", "sequence"], name="agenda_conclusion_sequence")
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.sequence}"


class AgendaEvent(models.Model):
    """Append-only, hash-chained: each event hashes its content with the previous event's hash
    and the agenda state it produced, so the health check can tell edits outside the tools."""

    id = models.BigAutoField(primary_key=True)
    agenda = models.ForeignKey(Agenda, on_delete=models.CASCADE, related_name="events")
    sequence = models.PositiveIntegerField(help_text="Equals the agenda revision it produced.")
    kind = models.CharField(max_length=40)
    actor_id = models.CharField(max_length=300)
    payload = models.JSONField(default=dict)
    state_hash = models.CharField(max_length=64)
    previous_hash = models.CharField(max_length=64, blank=True, default="")
    event_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["agenda", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["agenda", "sequence"], name="agenda_event_sequence")
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.kind}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValueError("Agenda events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ValueError("Agenda events are append-only.")
