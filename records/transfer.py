"""Export a workspace to JSON Lines and restore it into an empty one, with nothing lost.

An export reads one snapshot and ends with a footer: each kind's row count and the sha256 of
every line before it. A restore refuses a file whose footer is missing or does not match, and a
row pointing at a row the file does not hold, before writing anything. Rows are loaded as they
were (the services would write new events); triggers build the search index and move the
counters in the same transaction, so the load is all or nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.base import DeserializationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, connection, models, transaction

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

# Each kind of row an export holds, and the path to its workspace; parents before children,
# so a restore never points at a row that is not there yet.
MODELS: dict[type[models.Model], str] = {
    Collection: "workspace_id",
    CollectionAlias: "workspace_id",
    Record: "workspace_id",
    RecordVersion: "record__workspace_id",
    RecordAlias: "workspace_id",
    Relationship: "workspace_id",
    SelfMapping: "workspace_id",
    AuditEvent: "workspace_id",
    ClarificationReview: "workspace_id",
}


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
    return model._default_manager.filter(**{path: workspace_id}).order_by("pk")


def count_rows(workspace_id: str) -> int:
    return sum(_rows(model, path, workspace_id).count() for model, path in MODELS.items())


def export_workspace(
    workspace_id: str, out: IO[str], progress: Callable[[int], None] = lambda n: None
) -> int:
    """Write the workspace as one snapshot: rows written meanwhile are either all in the file
    (a record with its versions and events) or none of them. Returns the row count."""
    with read_snapshot():
        if not Workspace.objects.filter(pk=workspace_id).exists():
            raise TransferError(f"workspace {workspace_id!r} does not exist in this database.")
        tables = (
            (model, _rows(model, path, workspace_id).iterator(chunk_size=CHUNK))
            for model, path in MODELS.items()
        )
        return write_export(workspace_id, tables, out, progress)


def write_export(
    workspace_id: str,
    tables: Iterable[tuple[type[models.Model], Iterable[models.Model]]],
    out: IO[str],
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """The header, each table's rows in MODELS order, and the footer; returns the row count."""
    digest = hashlib.sha256()
    rows: dict[str, int] = {}

    def emit(text: str) -> None:
        out.write(text)
        digest.update(text.encode("utf-8"))

    emit(json.dumps({"format": FORMAT, "version": VERSION, "workspace": workspace_id}) + "\n")
    for model, table in tables:
        label = model._meta.label_lower
        rows[label] = 0
        remaining = iter(table)
        while chunk := list(islice(remaining, CHUNK)):
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
    try:
        with open(path, "rb") as stream:
            first = last = stream.readline()
            lines = 1 if first else 0
            for line in stream:
                digest.update(last)
                last = line
                lines += 1
    except OSError as exc:
        raise TransferError(f"{path} cannot be read ({exc.strerror}).") from exc
    workspace_id = _header(first)
    footer = _json(last) if lines > 1 and last.endswith(b"\n") else None
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


def _json(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _header(line: bytes) -> str:
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
    """Plain DELETEs: QuerySet.delete() would read every row to collect cascades (and
    AuditEvent refuses delete()): this is the one sanctioned removal, asked for with --replace.
    Embeddings go first, as they point at the records: they are derived, never exported, and
    computed again on the next search by meaning. The names log goes last, as deleting the
    records appended to it: a reader then sees a gap and reads the names whole."""
    in_workspace = "workspace_id = %s"
    of_its_records = f"record_id IN (SELECT id FROM {Record._meta.db_table} WHERE {in_workspace})"
    kinds: list[type[models.Model]] = [RecordEmbedding, *reversed(MODELS), NameChange]
    with connection.cursor() as cursor:
        for model in kinds:
            where = of_its_records if model is RecordVersion else in_workspace
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE {where}", [workspace_id])


def import_workspace(
    checked: Checked,
    *,
    replace: bool = False,
    progress: Callable[[int], None] = lambda n: None,
    phases: dict[str, float] | None = None,
    analyze: bool = True,
) -> tuple[str, int]:
    """Restore a file check_file passed; refuses a workspace that holds data unless replace is
    set. All or nothing. `phases` (seconds per phase) and `analyze=False` serve the benchmark."""
    workspace_id = checked.workspace_id
    spent = {} if phases is None else phases
    last = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal last
        now = time.perf_counter()
        spent[phase] = spent.get(phase, 0.0) + now - last
        last = now

    try:
        with transaction.atomic():
            Workspace.objects.get_or_create(id=workspace_id)
            if count_rows(workspace_id) and not replace:
                raise TransferError(
                    f"workspace {workspace_id!r} already holds data; restore into an empty "
                    "database, or pass --replace to discard what is there."
                )
            with bulk_counters(workspace_id):
                _delete_workspace_rows(workspace_id)
                lap("prepare")
                loaded = _load(checked, progress)
                lap("load")
            lap("counters")
            _reset_sequences()
            if analyze:
                refresh_statistics()
            lap("statistics")
    except IntegrityError as exc:  # e.g. a row whose key another workspace here already uses
        reason = str(exc).strip().splitlines()[0]
        raise TransferError(f"the file's rows do not fit this database ({reason}).") from exc
    lap("commit")
    return workspace_id, loaded


def _load(checked: Checked, progress: Callable[[int], None]) -> int:
    """Bulk-insert the rows in batches of one kind, each checked by _check_row first."""
    held: dict[type[models.Model], set[Any]] = {Collection: set(), Record: set(), AuditEvent: set()}
    counts: Counter[str] = Counter()
    batch: list[Any] = []

    def flush() -> None:
        if batch:
            type(batch[0])._default_manager.bulk_create(batch)
            progress(len(batch))
            batch.clear()

    with open(checked.path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if number in (1, checked.lines):  # the header and the footer
                continue
            try:
                items = list(serializers.deserialize("jsonl", line))
            except DeserializationError as exc:
                raise TransferError(f"line {number} is not an export row; {AGAIN}.") from exc
            for item in items:
                obj = item.object
                _check_row(obj, number, checked.workspace_id, held)
                counts[obj._meta.label_lower] += 1
                if batch and (type(batch[0]) is not type(obj) or len(batch) >= CHUNK):
                    flush()
                batch.append(obj)
    flush()
    if counts != {label: n for label, n in checked.rows.items() if n}:
        raise TransferError(f"the rows do not match the footer's counts; {AGAIN}.")
    return counts.total()


# What each kind of row points at, by field.
POINTERS: dict[type[models.Model], list[tuple[str, type[models.Model]]]] = {
    Record: [("collection_id", Collection)],
    CollectionAlias: [("collection_id", Collection)],
    RecordVersion: [("record_id", Record)],
    RecordAlias: [("record_id", Record)],
    SelfMapping: [("record_id", Record)],
    Relationship: [("source_id", Record), ("target_id", Record)],
    AuditEvent: [("record_id", Record), ("collection_id", Collection)],
    ClarificationReview: [("audit_event_id", AuditEvent)],
}


def _check_row(
    obj: models.Model, number: int, workspace_id: str, held: dict[type[models.Model], set[Any]]
) -> None:
    """Every row is of a kind an export holds, belongs to the workspace and points only at rows
    the file holds before it (`held`: the keys of those pointed at, so far)."""
    label = obj._meta.label_lower
    if type(obj) not in MODELS:  # e.g. a person or a token: never part of an export
        raise TransferError(f"line {number} is a kind of row no export holds ({label}); {AGAIN}.")
    if getattr(obj, "workspace_id", workspace_id) != workspace_id:  # a version: by its record
        raise TransferError(
            f"line {number} belongs to another workspace than the header's; {AGAIN}."
        )
    for field, model in POINTERS.get(type(obj), []):
        value = getattr(obj, field)
        if value and value not in held[model]:
            raise TransferError(
                f"line {number} ({label}) points at {model._meta.model_name} {value!r}, "
                f"which the file does not hold; {AGAIN}."
            )
    if type(obj) in held:
        held[type(obj)].add(obj.pk)


# PostgreSQL's row triggers that move one counter row per written row. In one transaction each
# move leaves a row version the next must walk past, so a restore was O(n^2) (5,000 records:
# 20 s). A restore turns them off inside its transaction (ALTER TABLE is transactional and
# holds other writers until the commit), then moves each counter once by what the rows would
# have. The search and catalog triggers stay on: their rows are per record or few.
BULK_TRIGGERS = {
    "records_record": ("records_record_names", "records_record_meaning", "records_record_count"),
    "records_recordalias": ("records_recordalias_names",),
    "records_relationship": ("records_relationship_links",),
}

# Where one move per row would have left them. The names log gets no rows for these moves, so
# a reader behind them sees a gap and reads the names whole (records/name_log.py).
COUNTER_MOVES = (
    # Every counter of the workspace moves at least once, also those of replaced rows only.
    "UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = %(ws)s",
    """INSERT INTO records_revisioncounter (workspace_id, key, value)
    SELECT %(ws)s, key, count(*) FROM (
        SELECT 'names:' || collection_id AS key FROM records_record WHERE workspace_id = %(ws)s
        UNION ALL SELECT 'names:*' FROM records_record WHERE workspace_id = %(ws)s
        UNION ALL SELECT 'meaning:records' FROM records_record WHERE workspace_id = %(ws)s
        UNION ALL SELECT 'names:' || r.collection_id FROM records_recordalias a
            JOIN records_record r ON r.id = a.record_id WHERE a.workspace_id = %(ws)s
        UNION ALL SELECT 'names:*' FROM records_recordalias WHERE workspace_id = %(ws)s
        UNION ALL SELECT 'links:' || source_id FROM records_relationship
            WHERE workspace_id = %(ws)s
        UNION ALL SELECT 'links:' || target_id FROM records_relationship
            WHERE workspace_id = %(ws)s
    ) AS moves GROUP BY key
    ON CONFLICT (workspace_id, key)
    DO UPDATE SET value = records_revisioncounter.value + EXCLUDED.value""",
    # The workspace held no records once the old ones were deleted: the counts are the file's.
    """INSERT INTO records_collectioncount (collection_id, workspace_id, active)
    SELECT collection_id, %(ws)s, count(*) FROM records_record
    WHERE workspace_id = %(ws)s AND archived_at IS NULL GROUP BY collection_id
    ON CONFLICT (collection_id) DO UPDATE SET active = EXCLUDED.active""",
)


@contextmanager
def bulk_counters(workspace_id: str) -> Iterator[None]:
    """Inside a transaction: the counter triggers off for the block, the counters moved after."""
    if connection.vendor != "postgresql":
        yield  # a SQLite row is updated in place: the triggers cost the same for every row
        return
    with connection.cursor() as cursor:
        _switch_triggers(cursor, "DISABLE")
    yield
    with connection.cursor() as cursor:
        for statement in COUNTER_MOVES:
            cursor.execute(statement, {"ws": workspace_id})
        _switch_triggers(cursor, "ENABLE")


def _switch_triggers(cursor: Any, switch: str) -> None:
    # A table with pending (deferred foreign-key) trigger events cannot be altered: check the
    # rows written so far in the transaction (the restore's, or a test's) first.
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    for table, triggers in BULK_TRIGGERS.items():
        for trigger in triggers:
            cursor.execute(f"ALTER TABLE {table} {switch} TRIGGER {trigger}")


# What a restore writes to, whose planner statistics are stale after it.
RESTORED_TABLES = [
    *(model._meta.db_table for model in MODELS),
    "records_record_search",
    "records_revisioncounter",
    "records_collectioncount",
    "records_namechange",
]


def refresh_statistics() -> None:
    """PostgreSQL: ANALYZE the tables a restore wrote, so the next queries are planned for the
    restored data (autovacuum would, later). Not SQLite: PRAGMA optimize after a 50,000-record
    restore cost 1.2 s and made grouping by linked record no faster."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(RESTORED_TABLES)}")


def _reset_sequences() -> None:
    """Rows were loaded with their IDs; move the ID sequences past them (PostgreSQL)."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(MODELS))
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
