"""Writing embeddings: one record's inside its write, and the catch-up of missing ones.

Embeddings are computed where they are searched. In a process that holds a workspace's vectors
(it has searched that workspace by meaning), a single-record write (create, update, rename)
embeds that record in its own transaction and patches the vectors, so the next search finds it
without a reload, and a commit never waits on more than one embedding. Bulk writes (imports,
a batch of updates) are embedded by a background thread from the moment they commit
(`embed_after_commit`). Single writes in a process that does not search that workspace by
meaning (most of an agent's writes, the admin) and restores (another process) embed nothing:
the records they leave without a current embedding, like a crash between a write and its
embedding or a change of model, are found by `missing_record_ids` and embedded by the catch-up
that search by meaning starts when it loads a workspace's vectors. So are rows
that cannot be read (`unreadable`: cut short, a scale that is not a number from 0 to 1, a value
of another type): one such row would fail or poison the whole workspace's vectors, so it counts
as missing, is logged once per process and record, and the search skips it until it is
embedded again.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from records.dry_run import in_dry_run
from records.meaning import model
from records.models import Record, RecordEmbedding

logger = logging.getLogger(__name__)

CATCH_UP_BATCH = 500
# Embedded within a search, at most (a page's worth: about 0.2 s); more go to a thread.
INLINE_CATCH_UP = 20
# quantise writes a scale of max|v| / 127 for a vector of two unit parts: never above 1/127. A
# larger one, finite or not, swamps the workspace's mean; a negative one flips the vector.
MAX_SCALE = 1.0

_reported_lock = threading.Lock()
_reported: set[str] = set()
_running_lock = threading.Lock()
_running: set[str] = set()  # workspaces a catch-up thread is embedding
_threads: list[threading.Thread] = []
# Set at exit: a catch-up stops between batches. A process must not end while a thread is inside
# the model (onnxruntime's own threads then abort the process: "terminate called").
_stopping = threading.Event()
EXIT_WAIT_S = 30.0  # at most one batch's embedding, on a slow machine


@atexit.register
def stop_catch_ups() -> None:
    """At exit: let each running catch-up finish its batch, and wait for it (bounded)."""
    _stopping.set()
    for thread in list(_threads):
        thread.join(EXIT_WAIT_S)


def record_text(title: str, data: Any) -> str:
    """What is embedded: the title, then every string and number among the values (not keys).

    Values go longest first, ties by their key path, never in stored key order: PostgreSQL's
    jsonb reorders keys, so that order made a record's vector, and the ranking, depend on the
    backend. Longest first also puts the prose, what a record is about, inside the tokens that
    are embedded (model.MAX_TOKENS) ahead of short codes and numbers.
    """
    values = sorted(_values(data, ()), key=lambda item: (-len(item[1]), item[0]))
    return " ".join([title, *(text for _, text in values)])


def _values(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _values(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _values(item, (*path, position))
    elif isinstance(value, str):
        yield path, value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, str(value)


def embedding_rows(records: list[Record]) -> list[RecordEmbedding]:
    import numpy as np

    from records.meaning.vectors import quantise

    texts = [record.title for record in records]
    texts += [record_text(record.title, record.data) for record in records]
    embedded = model.embed_texts(texts)
    # Title then whole text, quantised together: one scale for the row.
    vectors = np.concatenate([embedded[: len(records)], embedded[len(records) :]], axis=1)
    now = timezone.now()
    name, version = model.MODEL_NAME, model.model_version()
    rows = []
    for record, vector in zip(records, vectors, strict=True):
        data, scale = quantise(vector)
        rows.append(
            RecordEmbedding(
                record_id=record.pk,
                workspace_id=record.workspace_id,
                model_name=name,
                model_version=version,
                record_version=record.version,
                vector=data,
                scale=scale,
                computed_at=now,
            )
        )
    return rows


def save_embeddings(rows: list[RecordEmbedding]) -> None:
    RecordEmbedding.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["record"],
        update_fields=["model_name", "model_version", "record_version", "vector", "scale"]
        + ["computed_at"],
    )


def embed_written(record: Record, *, content_changed: bool) -> None:
    """Keep one record's embedding current, inside the transaction that wrote it.

    A change that leaves title and values alone (archive, alias) moves the version only: the
    embedding of the version before is still right and is carried forward, not recomputed.
    """
    if not model.enabled() or not _searched_here(record.workspace_id):
        return  # the next search by meaning of this workspace catches the record up
    if in_dry_run():
        # A preview's rows are rolled back: write nothing, but embed now, outside any write
        # lock, so the commit of the same write finds its vectors computed (model.embed_texts).
        if content_changed:
            embedding_rows([record])
        return
    if not content_changed:
        carried = RecordEmbedding.objects.filter(
            record_id=record.pk,
            record_version=record.version - 1,
            model_name=model.MODEL_NAME,
            model_version=model.model_version(),
        ).update(record_version=record.version)
        if carried:
            _patch_cache(record, None)
            return
    rows = embedding_rows([record])
    save_embeddings(rows)
    _patch_cache(record, rows[0])


def embed_after_commit(workspace_id: str, count: int) -> None:
    """Embed the `count` records of a bulk write in the background once (if) it commits: in
    a process that searches the workspace by meaning, or when there are more than the next
    search would embed itself (a few rows do not load the model into a process that writes)."""
    if model.enabled() and (count > INLINE_CATCH_UP or _searched_here(workspace_id)):
        transaction.on_commit(lambda: start_catch_up(workspace_id))


def _searched_here(workspace_id: str) -> bool:
    """Whether this process holds the workspace's vectors (only a search by meaning loads the
    index module, and with it numpy)."""
    index = sys.modules.get("records.meaning.index")
    return index is not None and bool(index.holds(workspace_id))


def _patch_cache(record: Record, row: RecordEmbedding | None) -> None:
    """Hand this process's cached vectors the one record just written, once it commits."""
    index = sys.modules["records.meaning.index"]
    if not index.holds(record.workspace_id):
        return  # dropped since the write began (another workspace's load evicted it)
    after = index.current_key(record.workspace_id)  # inside the write: this write's counters
    vector = None if row is None else (bytes(row.vector), row.scale)
    transaction.on_commit(lambda: index.patch(record, vector, after))


def unreadable(length: int | None, scale: Any) -> str | None:
    """Why a stored row (its vector's length in bytes, None if not bytes; its scale) cannot be
    used, or None if it can."""
    if length != model.STORED_DIMENSIONS:
        shown = "not bytes" if length is None else f"{length} bytes"
        return f"its vector is {shown}, not {model.STORED_DIMENSIONS}"
    if not isinstance(scale, float) or not 0.0 <= scale <= MAX_SCALE:
        return f"its scale is {scale!r}, not a number from 0 to {MAX_SCALE:g}"
    return None


def report_unreadable(workspace_id: str, record_id: str, why: str) -> None:
    """Log a row that cannot be read, once per process and record (every search skips it)."""
    with _reported_lock:
        if record_id in _reported:
            return
        _reported.add(record_id)
    logger.warning(
        "The embedding of record %s in workspace %s cannot be read (%s): search by meaning "
        "skips the record until the catch-up embeds it again.",
        record_id,
        workspace_id,
        why,
    )


def missing_record_ids(workspace_id: str, limit: int | None = None) -> list[str]:
    """Active records of the workspace whose embedding is missing, outdated or unreadable.

    Two plain scans of the workspace compared here rather than an anti-join: right after a
    bulk load PostgreSQL's statistics still call the embeddings table empty, and it then
    planned the join as a nested loop over a scan of it (minutes at 100,000 records). The
    vectors' lengths are read, not the vectors.
    """
    params: list[Any] = [workspace_id, model.MODEL_NAME, model.model_version()]
    length = "length(vector)"
    if connection.vendor == "sqlite":  # a column there holds any type: text is not a vector
        length = "CASE WHEN typeof(vector) = 'blob' THEN length(vector) END"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT record_id, record_version, {length}, scale FROM records_recordembedding "
            "WHERE workspace_id = %s AND model_name = %s AND model_version = %s",
            params,
        )
        current = set()
        for record_id, version, size, scale in cursor.fetchall():
            why = unreadable(size, scale)
            if why is None:
                current.add((record_id, version))
            else:
                report_unreadable(workspace_id, record_id, why)
        cursor.execute(
            "SELECT id, version FROM records_record "
            "WHERE workspace_id = %s AND archived_at IS NULL",
            [workspace_id],
        )
        missing = sorted(pk for pk, version in cursor.fetchall() if (pk, version) not in current)
    return missing if limit is None else missing[:limit]


def compute_for(record_ids: Iterable[str]) -> list[RecordEmbedding]:
    """Fresh embedding rows for these records, in batches, not yet saved."""
    ids = list(record_ids)
    rows: list[RecordEmbedding] = []
    for start in range(0, len(ids), CATCH_UP_BATCH):
        batch = list(Record.objects.filter(pk__in=ids[start : start + CATCH_UP_BATCH]))
        rows += embedding_rows(batch)
    return rows


def catching_up(workspace_id: str) -> bool:
    with _running_lock:
        return workspace_id in _running


def start_catch_up(workspace_id: str) -> None:
    """Embed every missing or outdated record of the workspace in a thread (one per workspace)."""
    with _running_lock:
        if workspace_id in _running:
            return
        _running.add(workspace_id)
    thread = threading.Thread(
        target=_catch_up_all, args=(workspace_id,), name="anchor-meaning", daemon=True
    )
    _threads[:] = [t for t in _threads if t.is_alive()] + [thread]
    thread.start()


def catch_up_now(workspace_id: str) -> None:
    """Embed the workspace's missing records in the background, and wait (after a restore)."""
    start_catch_up(workspace_id)
    for thread in list(_threads):
        thread.join()


# A writer holding the database (SQLite's one write lock, a long transaction) makes the store
# fail at once rather than wait; the batch is retried a few times, then left to the next search.
SAVE_ATTEMPTS = 6
SAVE_BACKOFF_S = 0.05


def _save_when_free(rows: list[RecordEmbedding]) -> None:
    for attempt in range(SAVE_ATTEMPTS):
        try:
            with transaction.atomic():
                save_embeddings(rows)
            return
        except OperationalError:
            if attempt == SAVE_ATTEMPTS - 1:
                raise
            time.sleep(SAVE_BACKOFF_S * 2**attempt)


def _catch_up_all(workspace_id: str) -> None:
    previous: list[str] = []
    try:
        while True:
            ids = missing_record_ids(workspace_id)
            if not ids or ids == previous:
                return
            for start in range(0, len(ids), CATCH_UP_BATCH):
                if _stopping.is_set():
                    return
                _save_when_free(compute_for(ids[start : start + CATCH_UP_BATCH]))
            previous = ids
    except Exception:
        # Nothing is lost: the records stay missing and the next search by meaning tries again.
        logger.exception("Catching up embeddings for workspace %s failed", workspace_id)
    finally:
        connection.close()
        with _running_lock:
            _running.discard(workspace_id)
