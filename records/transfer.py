"""Export a workspace to JSON Lines and restore it into an empty one, with nothing lost.

A restore must reproduce history exactly (versions, timestamps, audit events with their IDs),
which the services by design cannot (they would write new events), so rows are loaded as they
were. The database triggers still run, so revision counters and the search index are rebuilt
inside the same transaction, and the load is all or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models, transaction

from records.models import (
    AuditEvent,
    ClarificationReview,
    Collection,
    CollectionAlias,
    NameChange,
    Record,
    RecordAlias,
    RecordEmbedding,
    RecordVersion,
    Relationship,
    SelfMapping,
    Workspace,
)

FORMAT = "anchor-workspace"
VERSION = 1
CHUNK = 2000

# Parents before children, so a restore never points at a row that is not there yet.
MODELS: list[tuple[type[models.Model], str]] = [
    (Collection, "workspace_id"),
    (CollectionAlias, "workspace_id"),
    (Record, "workspace_id"),
    (RecordVersion, "record__workspace_id"),
    (RecordAlias, "workspace_id"),
    (Relationship, "workspace_id"),
    (SelfMapping, "workspace_id"),
    (AuditEvent, "workspace_id"),
    (ClarificationReview, "workspace_id"),
]


class ExactJSONEncoder(DjangoJSONEncoder):
    """Django's encoder cuts datetimes to milliseconds; a restore must keep microseconds."""

    def default(self, o: Any) -> Any:
        if hasattr(o, "isoformat") and hasattr(o, "microsecond") and hasattr(o, "tzinfo"):
            text = o.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        return super().default(o)


class TransferError(Exception):
    """A file or target that cannot be exported or restored as asked."""


def _rows(model: type[models.Model], path: str, workspace_id: str) -> models.QuerySet[models.Model]:
    # _default_manager is `objects` for every model here, and is what a bare Model type has.
    return model._default_manager.filter(**{path: workspace_id}).order_by("pk")


def count_rows(workspace_id: str) -> int:
    return sum(_rows(model, path, workspace_id).count() for model, path in MODELS)


def export_workspace(
    workspace_id: str, out: IO[str], progress: Callable[[int], None] = lambda n: None
) -> int:
    """Write the header and every row, in a stable order; returns the number of rows."""
    if not Workspace.objects.filter(pk=workspace_id).exists():
        raise TransferError(f"workspace {workspace_id!r} does not exist in this database.")
    out.write(json.dumps({"format": FORMAT, "version": VERSION, "workspace": workspace_id}) + "\n")
    written = 0
    for model, path in MODELS:
        chunk: list[models.Model] = []
        for row in _rows(model, path, workspace_id).iterator(chunk_size=CHUNK):
            chunk.append(row)
            if len(chunk) == CHUNK:
                written += _write(chunk, out, progress)
                chunk = []
        written += _write(chunk, out, progress)
    return written


def _write(rows: list[models.Model], out: IO[str], progress: Callable[[int], None]) -> int:
    if rows:
        serializers.serialize("jsonl", rows, stream=out, cls=ExactJSONEncoder)
        progress(len(rows))
    return len(rows)


def read_header(lines: Iterator[str]) -> str:
    try:
        header = json.loads(next(lines))
    except (StopIteration, json.JSONDecodeError) as exc:
        raise TransferError("the file does not start with an Anchor export header.") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TransferError("the file is not an Anchor workspace export.")
    if header.get("version") != VERSION:
        raise TransferError(
            f"export version {header.get('version')!r} is not supported "
            f"(this Anchor reads version {VERSION})."
        )
    return str(header["workspace"])


def _delete_workspace_rows(workspace_id: str) -> None:
    # First, as they point at the records: embeddings are derived, never exported, and are
    # computed again for the restored records on the next search by meaning.
    RecordEmbedding.objects.filter(workspace_id=workspace_id)._raw_delete(using="default")
    for model, path in reversed(MODELS):
        # QuerySet.delete() bypasses AuditEvent.delete(): this is the one sanctioned removal,
        # asked for explicitly with --replace.
        model._default_manager.filter(**{path: workspace_id})._raw_delete(using="default")
    # Last, as deleting the records above appended to it: the names log of a replaced
    # workspace is gone with it (a reader then sees a gap and reads the names whole).
    NameChange.objects.filter(workspace_id=workspace_id)._raw_delete(using="default")


def import_workspace(
    lines: Iterable[str],
    *,
    replace: bool = False,
    progress: Callable[[int], None] = lambda n: None,
) -> tuple[str, int]:
    """Restore an export; refuses a workspace that holds data unless replace is set."""
    stream = iter(lines)
    workspace_id = read_header(stream)
    with transaction.atomic():
        Workspace.objects.get_or_create(id=workspace_id)
        if count_rows(workspace_id):
            if not replace:
                raise TransferError(
                    f"workspace {workspace_id!r} already holds data; restore into an empty "
                    "database, or pass --replace to discard what is there."
                )
            _delete_workspace_rows(workspace_id)
        loaded = 0
        record_ids: set[str] = set()
        batch: list[Any] = []
        batch_model: type[models.Model] | None = None
        for line in stream:
            if not line.strip():
                continue
            for item in serializers.deserialize("jsonl", line):
                obj = item.object
                if isinstance(obj, Record):
                    record_ids.add(obj.pk)
                owner = (
                    workspace_id
                    if isinstance(obj, RecordVersion) and obj.record_id in record_ids
                    else getattr(obj, "workspace_id", None)
                )
                if owner != workspace_id:
                    raise TransferError(
                        "the file mixes workspaces; it was not written by export_workspace."
                    )
                if batch_model is not type(obj) or len(batch) >= CHUNK:
                    loaded += _flush(batch_model, batch, progress)
                    batch, batch_model = [], type(obj)
                batch.append(obj)
        loaded += _flush(batch_model, batch, progress)
        _reset_sequences()
    return workspace_id, loaded


def _workspace_of(obj: models.Model) -> str | None:
    if isinstance(obj, RecordVersion):
        return (
            Record.objects.filter(pk=obj.record_id).values_list("workspace_id", flat=True).first()
        )
    return getattr(obj, "workspace_id", None)


def _flush(
    model: type[models.Model] | None, batch: list[Any], progress: Callable[[int], None]
) -> int:
    if model is None or not batch:
        return 0
    model._default_manager.bulk_create(batch)
    progress(len(batch))
    return len(batch)


def _reset_sequences() -> None:
    """Rows were loaded with their IDs; move the ID sequences past them (PostgreSQL)."""
    statements = connection.ops.sequence_reset_sql(no_style(), [m for m, _ in MODELS])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
