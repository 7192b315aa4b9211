"""The store: workspaces, collections, records with every version, links, aliases, audit, counters.

Every row carries its workspace, so no query reaches across by accident. Counters, active counts
and the full-text index are kept by database triggers, inside the writing transaction."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import models

from records.ids import new_id


def new_feed_key() -> str:
    return secrets.token_hex(32)


class Workspace(models.Model):
    id = models.CharField(primary_key=True, max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    # Seals the change feed's positions (records.selectors.feed_positions); not derived from
    # SECRET_KEY, which the stdio server draws afresh in every process.
    feed_key = models.CharField(max_length=64, default=new_feed_key, editable=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.id


class Collection(models.Model):
    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="collections")
    name = models.CharField(max_length=100)
    # NFKC + casefold + collapsed whitespace, so "Expenses" and "expenses " are one collection.
    normalized_name = models.CharField(max_length=400, editable=False)
    purpose = models.TextField(max_length=2000)
    record_meaning = models.TextField(max_length=2000, blank=True)
    typical_fields = models.JSONField(default=list, blank=True)
    relationship_guidance = models.TextField(max_length=2000, blank=True)
    requires_approval = models.BooleanField(
        default=False, help_text="Agent commits to this collection wait for a person's approval."
    )
    created_by = models.CharField(max_length=300)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "normalized_name"], name="collection_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class CollectionAlias(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=100)
    normalized_alias = models.CharField(max_length=400, editable=False)
    created_by = models.CharField(max_length=300)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["alias"]
        verbose_name_plural = "collection aliases"
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "normalized_alias"], name="collection_alias_unique"
            )
        ]

    def __str__(self) -> str:
        return self.alias


class Record(models.Model):
    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="records")
    collection = models.ForeignKey(Collection, on_delete=models.PROTECT, related_name="records")
    title = models.CharField(max_length=300)
    data = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_by = models.CharField(max_length=300)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # Keyset pagination of a collection's active records: (created_at, id) ascending.
            models.Index(
                fields=["workspace", "collection", "created_at", "id"], name="record_page"
            ),
            models.Index(fields=["workspace", "created_at", "id"], name="record_ws_page"),
        ]

    def __str__(self) -> str:
        return self.title


class RecordVersion(models.Model):
    """The full state of a record after each version, so any record can be read as of a time."""

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    data = models.JSONField(default=dict)
    aliases = models.JSONField(default=list)
    archived_at = models.DateTimeField(null=True, blank=True)
    actor_id = models.CharField(max_length=300)
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["record", "version"]
        constraints = [
            models.UniqueConstraint(fields=["record", "version"], name="record_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.record_id} v{self.version}"


class RecordAlias(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=300)
    normalized_alias = models.CharField(max_length=1200, editable=False)
    created_by = models.CharField(max_length=300)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["alias"]
        verbose_name_plural = "record aliases"
        constraints = [
            models.UniqueConstraint(
                fields=["record", "normalized_alias"], name="record_alias_unique"
            )
        ]

    def __str__(self) -> str:
        return self.alias


class SelfMapping(models.Model):
    """Which record "me" means for one actor; set once from an explicit user statement."""

    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    actor_id = models.CharField(max_length=300)
    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="self_mappings")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "actor_id"], name="self_mapping_unique")
        ]

    def __str__(self) -> str:
        return f"{self.actor_id} → {self.record_id}"


class Relationship(models.Model):
    id = models.CharField(primary_key=True, max_length=36, default=new_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    source = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="outgoing")
    relationship_type = models.CharField(max_length=100)
    target = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="incoming")
    created_by = models.CharField(max_length=300)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "relationship_type", "target"], name="relationship_unique"
            )
        ]
        indexes = [models.Index(fields=["target", "relationship_type"], name="relationship_in")]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.relationship_type}-> {self.target_id}"


class AuditEvent(models.Model):
    """Append-only. Updates are refused by a trigger; nothing in the project deletes events."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    actor_id = models.CharField(max_length=300)
    # Over HTTP, the credential the agent acted through (records.acting), and its name then.
    # Nullable so adding them left the table (and its append-only trigger) in place on SQLite.
    credential = models.CharField(max_length=60, null=True, blank=True)
    credential_name = models.CharField(max_length=300, null=True, blank=True)
    kind = models.CharField(max_length=60)
    entity_type = models.CharField(max_length=30)
    entity_id = models.CharField(max_length=36)
    # Denormalised so a record's history is one indexed range scan (a collection's own
    # events are read by entity: audit_entity).
    record_id = models.CharField(max_length=36, blank=True, default="")
    collection_id = models.CharField(max_length=36, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    decision_reason = models.TextField(blank=True, default="")
    # What the agent says the user told it. The server cannot verify it: never consent.
    agent_reported_clarification = models.TextField(blank=True, default="")
    review_evidence = models.JSONField(default=list, blank=True)
    action_id = models.CharField(max_length=36, blank=True, default="")
    item_index = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["workspace", "record_id", "created_at", "id"], name="audit_record"
            ),
            models.Index(
                fields=["workspace", "collection_id", "created_at", "id"], name="audit_collection"
            ),
            models.Index(fields=["workspace", "created_at", "id"], name="audit_ws"),
            # A collection's history: its own events, not its records' (audit_collection).
            models.Index(
                fields=["workspace", "entity_type", "entity_id", "created_at", "id"],
                name="audit_entity",
            ),
            # A person's approval lists what the applied action touched by its events.
            models.Index(fields=["workspace", "action_id"], name="audit_action"),
            # What a credential last did (the person's agents page); stdio and the admin
            # write none, so the index holds HTTP writes only.
            models.Index(
                fields=["credential", "created_at"],
                name="audit_credential",
                condition=models.Q(credential__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.entity_type} {self.entity_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValueError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ValueError("Audit events are append-only.")


class RevisionCounter(models.Model):
    """names:<collection>, names:*, links:<record>, catalog, meaning:records, meaning:vectors;
    bumped only by triggers."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=60)
    value = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="revision_counter_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


class CollectionCount(models.Model):
    """How many active records a collection holds, so a catalog reads one row per collection;
    moved by the record triggers (migration 0010) in the writing statement, whatever writes."""

    collection_id = models.CharField(primary_key=True, max_length=36)
    workspace_id = models.CharField(max_length=64)
    active = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.collection_id}: {self.active} active"


class CollectionCountChange(models.Model):
    """A move of an active count made during a dry run (PostgreSQL), which must not lock the
    CollectionCount row (prepares would queue behind commits); the active count is
    CollectionCount plus these, and a rolled-back dry run takes its rows with it."""

    collection_id = models.CharField(max_length=36, db_index=True)
    workspace_id = models.CharField(max_length=64)
    delta = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.collection_id}: {self.delta:+d}"


class NameChange(models.Model):
    """One move of a names counter and the record whose names it was for; appended only by the
    triggers that move the counter, in the same statement.

    So "which records' names changed between revisions A and B of names:<collection>" is one
    indexed read of the rows after A, whatever the history holds, and the rows prove their own
    completeness: each move of a counter appends exactly one row at the value it moved to, so
    B - A rows with distinct revisions are every change in between. (A load that moves a counter
    without the triggers leaves a gap, and a reader seeing it reads the names whole.)

    No foreign key to the workspace: rows are appended while a whole store is being cleared (a
    test flush, a restore), in whatever order its tables go, and a key checked at commit would
    then fail; an orphaned row is never read (counter keys are never reused).
    """

    workspace_id = models.CharField(max_length=64)
    key = models.CharField(max_length=60)
    revision = models.BigIntegerField()
    record_id = models.CharField(max_length=36)

    class Meta:
        indexes = [
            models.Index(fields=["workspace_id", "key", "revision"], name="name_change_revision")
        ]

    def __str__(self) -> str:
        return f"{self.key}@{self.revision}: {self.record_id}"


class ClarificationReview(models.Model):
    """A person's verdict on what an agent reported the user said, beside its append-only audit
    event; the latest of an event's reviews stands, the earlier ones stay as the trail."""

    CONFIRMED = "confirmed"
    DISPUTED = "disputed"
    STATES = [(CONFIRMED, "Confirmed"), (DISPUTED, "Disputed")]

    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    audit_event = models.ForeignKey(
        AuditEvent, on_delete=models.PROTECT, related_name="clarification_reviews"
    )
    state = models.CharField(max_length=20, choices=STATES)
    reviewer_id = models.CharField(max_length=300)
    note = models.TextField(max_length=2000, blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["audit_event", "created_at", "id"], name="clarification_review_event"
            )
        ]

    def __str__(self) -> str:
        return f"{self.state} by {self.reviewer_id} on event {self.audit_event_id}"
