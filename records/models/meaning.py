"""Each record's embedding: what search by meaning compares a question against.

One row per record: the int8 vectors of its title and of its title and values, their scale,
the model and version that computed them and the record version they came from. A row behind
on either is recomputed (records.meaning)."""

from __future__ import annotations

from django.db import models

from records.models.store import Record, Workspace


class RecordEmbedding(models.Model):
    record = models.OneToOneField(
        Record, primary_key=True, on_delete=models.CASCADE, related_name="embedding"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    model_name = models.CharField(max_length=100)
    model_version = models.CharField(max_length=50)
    record_version = models.PositiveIntegerField()
    vector = models.BinaryField()
    scale = models.FloatField()
    computed_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["workspace"], name="record_embedding_ws")]

    def __str__(self) -> str:
        return f"{self.record_id} ({self.model_name} {self.model_version})"
