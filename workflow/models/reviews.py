"""Review tickets and prepared actions: the state behind review → prepare → commit."""

from __future__ import annotations

from django.db import models

from records.ids import new_id
from records.models import Workspace


class ReviewTicket(models.Model):
    """A discovery or resolution answer, stale when a counter it depends on moves or at expiry."""

    DISCOVERY = "discovery"
    RESOLUTION = "resolution"
    KIND_CHOICES = [(DISCOVERY, "Collection discovery"), (RESOLUTION, "Record resolution")]

    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    actor_id = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    request = models.JSONField(help_text="What was asked: name/purpose or query/scope.")
    answer = models.JSONField(help_text="Status, candidates and suggestions as returned.")
    counters = models.JSONField(help_text="Revision counters the answer depends on.")
    # The user's own answer in the client's dialog (MCP elicitation), apart from the agent's
    # reported clarification text: it came from the client, not the model.
    client_confirmation = models.JSONField(
        null=True,
        blank=True,
        help_text="User-confirmed in the client: who the client said it is, when, the question "
        "and the answer.",
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "actor_id", "created_at"], name="ticket_scope")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class ActionState(models.TextChoices):
    """Where a prepared action stands; the diagram of its moves is in docs/architecture.md.
    COMMITTED, REJECTED and STALE are final (committing again replays the outcome or refuses
    with the reason); an expired action stays PREPARED until a commit marks it STALE."""

    PREPARED = "prepared", "Prepared"
    COMMITTED = "committed", "Committed"
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting human approval"
    REJECTED = "rejected", "Rejected"
    STALE = "stale", "Stale: a review it relied on changed or expired"


# The states in which an action may still be applied (by a commit, an approval or the sweep).
OPEN_STATES = (ActionState.PREPARED, ActionState.AWAITING_APPROVAL)


class PreparedAction(models.Model):
    """An exact write the agent prepared, its preview, and its outcome once decided."""

    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    actor_id = models.CharField(max_length=300)
    # The credential the agent prepared it through over HTTP (records.acting); its commit,
    # or a person's approval, writes the audit events with it.
    credential = models.CharField(max_length=60, null=True, blank=True)
    credential_name = models.CharField(max_length=300, null=True, blank=True)
    operation = models.CharField(max_length=40)
    arguments = models.JSONField()
    review_ids = models.JSONField(default=list)
    decision_reason = models.TextField()
    clarification = models.TextField(blank=True, default="")
    evidence = models.JSONField(default=list, help_text="The cited reviews, as checked.")
    counters = models.JSONField(default=dict, help_text="Counters the cited reviews rely on.")
    preview = models.JSONField(default=dict)
    collection_ids = models.JSONField(default=list, help_text="Collections the write touches.")
    state = models.CharField(
        max_length=20, choices=ActionState.choices, default=ActionState.PREPARED
    )
    result = models.JSONField(null=True, blank=True, help_text="Stored outcome, for replay.")
    decided_by = models.CharField(max_length=300, blank=True, default="")
    decision_note = models.TextField(blank=True, default="")
    # Why the write can no longer apply, in words a person and an agent both read.
    stale_reason = models.TextField(blank=True, default="")
    # A person saw a stale write and set it aside; until then it is listed as needing attention.
    dismissed_by = models.CharField(max_length=300, blank=True, default="")
    dismissed_at = models.DateTimeField(null=True, blank=True)
    # When the agent that prepared a rejected or stale write was told (its digest, or its own
    # commit); each is told once.
    agent_told_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "state", "created_at"], name="action_queue"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.id} ({self.state})"
