"""Where each actor last finished reading a workspace's change feed, so "what changed since I last
looked" works across conversations; the mark belongs to the scope's actor, never to an argument.
"""

from __future__ import annotations

from django.db import models

from records.models import Workspace


class ReadMark(models.Model):
    """The newest audit event an actor has read in a workspace (0: nothing yet)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    actor_id = models.CharField(max_length=300)
    last_event_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "actor_id"], name="one_read_mark")
        ]

    def __str__(self) -> str:
        return f"{self.actor_id} read {self.workspace_id} to event {self.last_event_id}"
