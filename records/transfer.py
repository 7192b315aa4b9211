"""Export a workspace to JSON Lines and restore it into an empty one, with nothing lost.

An export reads one snapshot and ends with a footer: the row count of each kind and the
sha256 of every line before it. A restore refuses a file whose footer is missing or does not
match, before writing anything, and a row that points at a row the file does not hold.

A restore must reproduce history exactly (versions, timestamps, audit events with their IDs),
which the services by design cannot (they would write new events), so rows are loaded as they
were. The database triggers still run, so revision counters and the search index are rebuilt
inside the same transaction, and the load is all or nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.base import DeserializationError
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
from records.snapshot import read_snapshot

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
    """Write the header, every row in a stable order, and the footer; returns the row count.

    All reads share one snapshot, so rows written meanwhile are either all in the file (a
    record with its versions and events) or none of them."""
    digest = hashlib.sha256()
    rows: dict[str, int] = {}

    def emit(text: str) -> None:
        out.write(text)
        digest.update(text.encode("utf-8"))

    with read_snapshot():
        if not Workspace.objects.filter(pk=workspace_id).exists():
            raise TransferError(f"workspace {workspace_id!r} does not exist in this database.")
        emit(json.dumps({"format": FORMAT, "version": VERSION, "workspace": workspace_id}) + "\n")
        for model, path in MODELS:
            label = model._meta.label_lower
            rows[label] = 0
            chunk: list[models.Model] = []
            for row in _rows(model, path, workspace_id).iterator(chunk_size=CHUNK):
                chunk.append(row)
                if len(chunk) == CHUNK:
                    emit(serializers.serialize("jsonl", chunk, cls=ExactJSONEncoder))
                    rows[label] += len(chunk)
                    progress(len(chunk))
                    chunk = []
            if chunk:
                emit(serializers.serialize("jsonl", chunk, cls=ExactJSONEncoder))
                rows[label] += len(chunk)
                progress(len(chunk))
    out.write(json.dumps({"footer": {"rows": rows, "sha256": digest.hexdigest()}}) + "\n")
    return sum(rows.values())


@dataclass(frozen=True)
class Checked:
    """What a file's header and footer say, once its checksum matched."""

    path: Path
    workspace_id: str
    rows: dict[str, int]
    lines: int


AGAIN = "take the export again with export_workspace"


def check_file(path: Path) -> Checked:
    """Refuse a file that is not a whole, unaltered export, before anything is written."""
    digest = hashlib.sha256()
    first: bytes | None = None
    last: bytes | None = None
    lines = 0
    try:
        with open(path, "rb") as stream:
            for line in stream:
                if last is not None:
                    digest.update(last)
                first = line if first is None else first
                last = line
                lines += 1
    except OSError as exc:
        raise TransferError(f"{path} cannot be read ({exc.strerror}).") from exc
    workspace_id = _header(first)
    footer = _json(last) if lines > 1 and last is not None and last.endswith(b"\n") else None
    if not isinstance(footer, dict) or not isinstance(footer.get("footer"), dict):
        raise TransferError(
            f"the file has no footer: it was cut short, or written before exports had one; {AGAIN}."
        )
    body = footer["footer"]
    rows = body.get("rows")
    if body.get("sha256") != digest.hexdigest() or not isinstance(rows, dict):
        raise TransferError(
            f"the file does not match its footer's checksum: it was altered, reordered or cut "
            f"short; {AGAIN}."
        )
    return Checked(path, workspace_id, rows, lines)


def _json(line: bytes | None) -> Any:
    try:
        return json.loads(line or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _header(line: bytes | None) -> str:
    header = _json(line)
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TransferError("the file is not an Anchor workspace export (no export header).")
    if header.get("version") != VERSION:
        raise TransferError(
            f"export version {header.get('version')!r} is not supported "
            f"(this Anchor reads version {VERSION})."
        )
    if not isinstance(header.get("workspace"), str):
        raise TransferError("the export header names no workspace; " + AGAIN + ".")
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
    checked: Checked,
    *,
    replace: bool = False,
    progress: Callable[[int], None] = lambda n: None,
) -> tuple[str, int]:
    """Restore a file check_file passed; refuses a workspace that holds data unless replace is
    set. All or nothing: a row that does not fit (see References) undoes the whole load."""
    workspace_id = checked.workspace_id
    with transaction.atomic():
        Workspace.objects.get_or_create(id=workspace_id)
        if count_rows(workspace_id):
            if not replace:
                raise TransferError(
                    f"workspace {workspace_id!r} already holds data; restore into an empty "
                    "database, or pass --replace to discard what is there."
                )
            _delete_workspace_rows(workspace_id)
        loaded = _load(checked, progress)
        _reset_sequences()
    return workspace_id, loaded


def _load(checked: Checked, progress: Callable[[int], None]) -> int:
    references = References(checked.workspace_id)
    batch: list[Any] = []
    batch_model: type[models.Model] | None = None
    with open(checked.path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if number == 1 or number == checked.lines:  # the header and the footer
                continue
            try:
                items = list(serializers.deserialize("jsonl", line))
            except DeserializationError as exc:
                raise TransferError(f"line {number} is not an export row; {AGAIN}.") from exc
            for item in items:
                obj = item.object
                references.check(obj, number)
                if batch_model is not type(obj) or len(batch) >= CHUNK:
                    _flush(batch_model, batch, progress)
                    batch, batch_model = [], type(obj)
                batch.append(obj)
    _flush(batch_model, batch, progress)
    if references.rows != {label: n for label, n in checked.rows.items() if n}:
        raise TransferError(f"the rows do not match the footer's counts; {AGAIN}.")
    return sum(references.rows.values())


class References:
    """Every row belongs to the workspace and points only at rows the file holds before it."""

    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.held: dict[type[models.Model], set[Any]] = {
            Collection: set(),
            Record: set(),
            AuditEvent: set(),
        }
        self.rows: dict[str, int] = {}

    def check(self, obj: models.Model, number: int) -> None:
        label = obj._meta.label_lower
        self.rows[label] = self.rows.get(label, 0) + 1
        owner = getattr(obj, "workspace_id", self.workspace_id)  # a version goes by its record
        if owner != self.workspace_id:
            raise TransferError(
                f"line {number} belongs to another workspace than the header's; {AGAIN}."
            )
        for field, model in self._pointers(obj):
            value = getattr(obj, field)
            if value and value not in self.held[model]:
                raise TransferError(
                    f"line {number} ({label}) points at {model._meta.model_name} {value!r}, "
                    f"which the file does not hold; {AGAIN}."
                )
        if type(obj) in self.held:
            self.held[type(obj)].add(obj.pk)

    @staticmethod
    def _pointers(obj: models.Model) -> list[tuple[str, type[models.Model]]]:
        if isinstance(obj, (Record, CollectionAlias)):
            return [("collection_id", Collection)]
        if isinstance(obj, (RecordVersion, RecordAlias, SelfMapping)):
            return [("record_id", Record)]
        if isinstance(obj, Relationship):
            return [("source_id", Record), ("target_id", Record)]
        if isinstance(obj, AuditEvent):
            return [("record_id", Record), ("collection_id", Collection)]
        if isinstance(obj, ClarificationReview):
            return [("audit_event_id", AuditEvent)]
        return []


def _flush(
    model: type[models.Model] | None, batch: list[Any], progress: Callable[[int], None]
) -> None:
    if model is not None and batch:
        model._default_manager.bulk_create(batch)
        progress(len(batch))


def _reset_sequences() -> None:
    """Rows were loaded with their IDs; move the ID sequences past them (PostgreSQL)."""
    statements = connection.ops.sequence_reset_sql(no_style(), [m for m, _ in MODELS])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
