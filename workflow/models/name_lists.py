"""A scope's name list as the name cache holds it, kept in the database for a fresh process.

Written whole when a process builds the list from the records; read in one row by the next
process to start, which brings it up to date from the names log (records.name_log) rather than
reading every record again. See workflow.name_index.
"""

from __future__ import annotations

from django.db import models

from records.models import Workspace


class StoredNameList(models.Model):
    """One scope's entries at `revision` of its names counter, each column its values joined
    by the unit separator (no stored value holds one), in entry order."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    scope_key = models.CharField(max_length=60)  # the names counter: names:<collection>
    revision = models.BigIntegerField()
    record_ids = models.TextField()
    names = models.TextField()  # normalized
    displays = models.TextField()
    aliases = models.TextField()  # "1" for an alias, "0" for a title, one character an entry

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "scope_key"], name="one_name_list")
        ]

    def __str__(self) -> str:
        return f"{self.scope_key}@{self.revision}"
