"""A scope's name list as the name cache holds it, kept in the database for a fresh process, which
brings it up to date from the names log (records.name_log). See workflow.names.
"""

from __future__ import annotations

from django.db import models

from records.models import Workspace

# The stored form's version: a row of another is read as no row (the list is built again).
# 4: no display marks (a display is read by splitting the column once).
NAME_LIST_LAYOUT = 4


class StoredNameList(models.Model):
    """One scope's entries at `revision` of its names counter, in entry order: the names and
    displays joined by the unit separator (no stored value holds one), the record IDs packed."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    scope_key = models.CharField(max_length=60)  # the names counter: names:<collection>
    revision = models.BigIntegerField()
    layout = models.PositiveSmallIntegerField(default=NAME_LIST_LAYOUT)
    record_ids = models.BinaryField()  # each ID's 16 UUID bytes
    names = models.TextField()  # normalized
    displays = models.TextField()  # empty where the name, title-cased, is the display
    aliases = models.TextField()  # "1" for an alias, "0" for a title, one character an entry

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "scope_key"], name="one_name_list")
        ]

    def __str__(self) -> str:
        return f"{self.scope_key}@{self.revision}"
