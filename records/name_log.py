"""Which records' names were written between two revisions of a names counter.

Read from records_namechange, which the counter triggers append to (see NameChange): one indexed
read of the changes themselves, never of the scope or of its history. Rows at or below a stored
name list's revision are pruned when the list is stored: a reader behind that point meets a
gap, which makes it read the names whole (the stored list and the rows after it), never guess.
"""

from __future__ import annotations

from records.models import NameChange


def names_written(
    workspace_id: str, key: str, since: int, until: int, *, limit: int
) -> set[str] | None:
    """The records whose names moved counter `key` after `since`, up to `until`.

    None when the log cannot say: more than `limit` moves in between (the caller reads the names
    whole instead), or a move with no row (a load that went around the triggers).
    """
    if until <= since:
        return set()
    if until - since > limit:
        return None
    rows = NameChange.objects.filter(
        workspace_id=workspace_id, key=key, revision__gt=since, revision__lte=until
    ).values_list("revision", "record_id")
    revisions: set[int] = set()
    record_ids: set[str] = set()
    for revision, record_id in rows:
        revisions.add(revision)
        record_ids.add(record_id)
    if len(revisions) != until - since:
        return None
    return record_ids


def prune_names_log(workspace_id: str, key: str, through: int) -> int:
    """Delete counter `key`'s rows at or below revision `through`; how many went."""
    deleted, _ = NameChange.objects.filter(
        workspace_id=workspace_id, key=key, revision__lte=through
    ).delete()
    return deleted
