"""Each record's embedding: what search by meaning compares a question against.

One row per record, kept beside the data rather than in it: the vectors of the record's title
and of its title and values, side by side as int8 bytes (one per dimension) with the scale
that turns them back into floats, the model and model version (which names that layout) that
computed them, and the record version they were computed from. A row whose model or record
version is behind is outdated and is recomputed (records.meaning).
"""

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
