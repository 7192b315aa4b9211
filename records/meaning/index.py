"""A workspace's vectors in memory, current by two counters, and the nearest records to a query.

The cache holds, per workspace, every active record's current embedding as an int8 matrix
with one scale per row, the packed sign bits and the record and collection of each row. It is
keyed by the counters meaning:records and meaning:vectors (moved by triggers, migration 0009),
while both stand still the cached vectors are exactly the stored ones. When meaning:records
moved, records written without an embedding (bulk writes, a crash, a new model) are looked
for first: up to INLINE_CATCH_UP are embedded there and then; more are embedded by a
background thread (started as soon as a bulk write commits: embeddings.embed_after_commit),
and until it is done `scope_vectors` answers with those embedded so far and how many are
pending, which the caller finds by words alone and counts in its note. A stored row that
cannot be read (records.meaning.embeddings.unreadable) is left out of the vectors and handed
to that thread; the rest still answer by meaning.

Each row holds two vectors (records.meaning.model.PARTS: the title, the whole text); a record's
similarity is the nearer of the two. Both are compared after centring on the workspace's mean
vector, computed here from the cached rows rather than stored: what every record of a
workspace shares (its common vocabulary) then stops counting as likeness, and the stored rows
need not change when the mean moves. The mean is shrunk towards zero for a small workspace
(CENTRE_PRIOR), where one record would otherwise be most of it.

Nearest: over SHORTLIST vectors, the rows nearest by sign bits (Hamming) are shortlisted
first and only those are scored with the int8 vectors, half a row (one part) at a time. The
CANDIDATES best are then ranked by their similarity less HUB_WEIGHT times their hubness: a
record's mean similarity to its HUB_NEIGHBOURS nearest among those candidates (as CSLS does for
word translation). A hub, a record near everything (a filler of a common shape), stops crowding
out the answer. Recall@10 of the labelled set's questions in other words, by meaning alone:
57 to 74 % at 10,000 records, 73 to 78 % at 1,000 (weight 0.5: 73 and 78 %; 0.3 at 1,000: 76 %;
hubness by both parts: 75 and 76 %).

The sign bits are taken relative to the centre at load; rows patched in later keep that centre
for their bits, a drift of one record in thousands that the next load removes.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.db import DatabaseError, connection, transaction

from records.meaning import model
from records.meaning.embeddings import (
    INLINE_CATCH_UP,
    catching_up,
    compute_for,
    missing_record_ids,
    report_unreadable,
    save_embeddings,
    start_catch_up,
    unreadable,
)
from records.meaning.vectors import hamming, sign_bits
from records.models import Record, RecordEmbedding, RevisionCounter
from records.scope_cache import ScopeCache

logger = logging.getLogger(__name__)

RECORDS_KEY = "meaning:records"
VECTORS_KEY = "meaning:vectors"
# While a catch-up stores its batches, a search reloads the vectors at most this often (a
# reload of 100,000 records takes about 2 s).
PENDING_RELOAD_S = 10.0
SHORTLIST = 4000
CANDIDATES = 1000
HUB_NEIGHBOURS = 10
HUB_WEIGHT = 0.4
CACHED_WORKSPACES = 8
# A write the cached vectors follow by copying them leaves room for this share more rows (and
# at least ROOM_MIN), so the creates after it append in place instead of copying every vector
# (84 MB at 110,000 records: 60 ms a write).
ROOM_SHARE = 8
ROOM_MIN = 64
# Rows of weight zero added to the mean: a workspace needs hundreds of records before its mean
# says what they all share, and a few records of one topic must not cancel that topic out.
# Measured on the labelled set (3,720 records): 500 keeps the full gain, 1,000 loses a point.
CENTRE_PRIOR = 500
DERIVE_BATCH = 8192
# Rows of the store a question is compared with (confidence): every row below twice this, else
# an even step through them (8,192 to 16,383 rows). 1,024 of 10,000 followed the rows' order:
# 24-28 of 45 questions with no answer marked none as they were shuffled; all: 27 each time.
TYPICAL_SAMPLE = 8192

Key = tuple[tuple[int, int], tuple[int, int]]

# Each workspace's vectors at the counters they were read at (records.scope_cache). A patch
# appends into a buffer views share, so patches take a lock of their own.
_cache: ScopeCache[Key, ScopeVectors] = ScopeCache(CACHED_WORKSPACES)
_patch_lock = threading.Lock()


@dataclass
class ScopeVectors:
    key: Key
    record_ids: list[str]
    collections: np.ndarray  # int32 code per row
    collection_codes: dict[str, int]
    # int8, rows x STORED_DIMENSIONS (title part, then whole part). Its first len(self) rows are
    # this view's; rows past them are room that a later view of the same buffer appends into.
    matrix: np.ndarray
    scales: np.ndarray  # float32 per row
    squares: np.ndarray  # float32, rows x parts: each part's squared length
    total: np.ndarray  # float64 sum of the rows (dequantised): the mean's numerator
    bits_centre: np.ndarray  # float32 centre the sign bits were taken from
    # packed signs about bits_centre, rows x STORED_DIMENSIONS / 64 words; room as `matrix`
    bits: np.ndarray
    # Rows of matrix and bits written so far, shared by every view of those buffers: only the
    # view that ends where the writing ended, with room left, may append in place.
    filled: list[int]
    # Active records not yet embedded (a background catch-up runs): found by words alone.
    pending: int = 0
    loaded_at: float = field(default_factory=time.monotonic)

    def __len__(self) -> int:
        return len(self.record_ids)

    def nbytes(self) -> int:
        arrays = self.collections.nbytes + self.matrix.nbytes + self.scales.nbytes
        arrays += self.squares.nbytes + self.total.nbytes + self.bits_centre.nbytes
        return arrays + self.bits.nbytes + sum(len(i) + 49 for i in self.record_ids)

    def centre(self) -> np.ndarray:
        return (self.total / (len(self) + CENTRE_PRIOR)).astype(np.float32)

    def in_scope(self, collection_id: str | None) -> np.ndarray | None:
        """The rows of the collection (None: every row)."""
        if collection_id is None:
            return None
        code = self.collection_codes.get(collection_id, -1)
        return np.flatnonzero(self.collections == code)

    def typical(self, query: np.ndarray, *, collection_id: str | None) -> tuple[float, int]:
        """(the query's mean similarity to an even sample of the rows in scope, their count):
        how near the store as a whole is to the question, not only its best record."""
        rows = self.in_scope(collection_id)
        count = len(self) if rows is None else len(rows)
        sample = np.arange(0, count, max(1, count // TYPICAL_SAMPLE))
        chosen = sample if rows is None else rows[sample]
        return (float(self._similarities(query, chosen).mean()) if count else 0.0), count

    def nearest(
        self, query: np.ndarray, *, collection_id: str | None, limit: int, min_similarity: float
    ) -> list[tuple[str, float]]:
        """Up to `limit` (record_id, score) pairs, best first, of similarity at or above the
        floor. The similarity is the cosine of query and record, both centred, for the nearer
        part; the score, that less the record's hubness (the module's docstring)."""
        rows = self.in_scope(collection_id)
        count = len(self) if rows is None else len(rows)
        if count == 0:
            return []
        if count > SHORTLIST:
            bits = self.bits[: len(self)] if rows is None else self.bits[rows]
            distances = hamming(
                bits, sign_bits(np.tile(query, len(model.PARTS)) - self.bits_centre)
            )
            short = np.argpartition(distances, SHORTLIST - 1)[:SHORTLIST]
            rows = short if rows is None else rows[short]
        if rows is None:
            rows = np.arange(count)
        similar = self._similarities(query, rows)
        near = np.argpartition(-similar, min(CANDIDATES, len(rows)) - 1)[:CANDIDATES]
        rows, similar = rows[near], similar[near]
        scores = similar - HUB_WEIGHT * self._hubness(rows)
        # Below the floor never takes a place: the order is the score, not the similarity.
        scores = np.where(similar >= min_similarity, scores, -np.inf)
        take = min(limit, len(rows))
        best = np.argpartition(-scores, take - 1)[:take]
        kept = sorted(
            (i for i in best if similar[i] >= min_similarity),
            key=lambda i: (-scores[i], self.record_ids[rows[i]]),
        )
        return [(self.record_ids[rows[i]], float(scores[i])) for i in kept]

    def _hubness(self, rows: np.ndarray) -> np.ndarray:
        """Each row's mean similarity (whole texts, centred) to its nearest other rows."""
        neighbours = min(HUB_NEIGHBOURS, len(rows) - 1)
        if neighbours < 1:
            return np.zeros(len(rows), np.float32)
        span = slice(model.DIMENSIONS, 2 * model.DIMENSIONS)
        whole = self.matrix[rows, span].astype(np.float32) * self.scales[rows, None]
        whole -= self.centre()[span]
        whole /= np.maximum(np.linalg.norm(whole, axis=1, keepdims=True), 1e-12)
        alike = whole @ whole.T
        np.fill_diagonal(alike, -np.inf)
        nearest = np.partition(alike, -neighbours, axis=1)[:, -neighbours:]
        return np.asarray(nearest.mean(axis=1))

    def _similarities(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Centred cosine of the query with each row's nearer part.

        A row r ~ s * q (int8 q) centred on c: (r - c) . x = s * (q . x) - c . x and
        |r - c|^2 = |r|^2 - 2 s * (q . c) + |c|^2, so one product of the rows with two columns
        (centred query, centre) per part scores them without a float copy of the centred rows.
        """
        centre = self.centre()
        scales = self.scales[rows]
        best: np.ndarray | None = None
        for part in range(len(model.PARTS)):
            span = slice(part * model.DIMENSIONS, (part + 1) * model.DIMENSIONS)
            mean = centre[span]
            asked = query - mean
            asked /= max(float(np.linalg.norm(asked)), 1e-12)
            half = self.matrix[rows, span].astype(np.float32)  # a part at a time: less memory
            products = half @ np.stack([asked, mean], axis=1)
            along, with_mean = products[:, 0] * scales, products[:, 1] * scales
            lengths = self.squares[rows, part] - 2 * with_mean + float(mean @ mean)
            scores = (along - float(asked @ mean)) / np.sqrt(np.maximum(lengths, 1e-12))
            best = scores if best is None else np.maximum(best, scores)
        assert best is not None
        return best


def _derived(
    matrix: np.ndarray, scales: np.ndarray, bits_centre: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(total, squares, bits_centre, bits) of these rows, in batches (no float copy of all).

    bits_centre None: the centre of these rows themselves (a load); else the one given (a patch).
    """
    parts = len(model.PARTS)
    total = np.zeros(model.STORED_DIMENSIONS, np.float64)
    squares = np.zeros((len(matrix), parts), np.float32)
    for start in range(0, len(matrix), DERIVE_BATCH):
        rows = matrix[start : start + DERIVE_BATCH].astype(np.float32)
        rows *= scales[start : start + DERIVE_BATCH, None]
        total += rows.sum(axis=0, dtype=np.float64)
        squares[start : start + len(rows)] = (rows**2).reshape(len(rows), parts, -1).sum(axis=2)
    if bits_centre is None:
        bits_centre = (total / (len(matrix) + CENTRE_PRIOR)).astype(np.float32)
    bits = np.zeros((len(matrix), model.STORED_DIMENSIONS // 64), np.uint64)
    for start in range(0, len(matrix), DERIVE_BATCH):
        rows = matrix[start : start + DERIVE_BATCH].astype(np.float32)
        rows *= scales[start : start + DERIVE_BATCH, None]
        bits[start : start + len(rows)] = sign_bits(rows - bits_centre)
    return total, squares, bits_centre, bits


def query_vector(text: str) -> np.ndarray:
    vector: np.ndarray = model.embed_texts([text])[0]
    return vector


def _counters(workspace_id: str) -> Key:
    """(row id, value) of meaning:records and meaning:vectors; (0, 0) for a row not yet made.

    The row id is part of the key because a workspace replaced by a restore starts its
    counters again: the same value on a new row is another state.
    """
    found = {
        key: (pk, value)
        for key, pk, value in RevisionCounter.objects.filter(
            workspace_id=workspace_id, key__in=[RECORDS_KEY, VECTORS_KEY]
        ).values_list("key", "pk", "value")
    }
    return found.get(RECORDS_KEY, (0, 0)), found.get(VECTORS_KEY, (0, 0))


def cached(workspace_id: str) -> ScopeVectors | None:
    """The workspace's vectors this process holds, at whatever counters they were read."""
    found = _cache.latest(workspace_id)
    return found[1] if found is not None else None


def holds(workspace_id: str) -> bool:
    return cached(workspace_id) is not None


def current_key(workspace_id: str) -> Key:
    return _counters(workspace_id)


def patch(record: Record, vector: tuple[bytes, float] | None, after: Key) -> None:
    """Bring the cached vectors past one committed single-record write, or drop them.

    `after` is the counters as that write left them; the cache can follow only if it is
    exactly one write behind (each single-record write moves both counters by one). Anything
    else (another process's writes, a bulk write in the same transaction) drops the cache and
    the next search loads the workspace again. `vector` None: the embedding was carried
    forward to the record's new version (archive, alias), so only its presence may change.
    """
    workspace_id = record.workspace_id
    with _patch_lock:
        found = _cache.latest(workspace_id)
        if found is None:
            return
        cached = found[1]
        (records_row, records_at), (vectors_row, vectors_at) = cached.key
        expected = (
            (records_row or after[0][0], records_at + 1),
            (vectors_row or after[1][0], vectors_at + 1),
        )
        if after != expected:
            _cache.drop(workspace_id)
            return
        patched = _patched(cached, record, vector, after)
        _cache.put(workspace_id, patched.key, patched)


def _patched(
    cached: ScopeVectors, record: Record, vector: tuple[bytes, float] | None, after: Key
) -> ScopeVectors:
    ids = cached.record_ids
    count = len(ids)
    try:
        position: int | None = ids.index(record.pk)
    except ValueError:
        position = None
    # The rows kept: all of them for a new record (a slice, not a mask: no copy), else all but
    # the record's own.
    keep: slice | np.ndarray = slice(None)
    if position is not None:
        if vector is None:
            data, scale = cached.matrix[position].tobytes(), float(cached.scales[position])
            vector = (data, scale)
        keep = np.ones(count, dtype=bool)
        keep[position] = False
    if record.archived_at is not None or vector is None:
        vector_rows: list[tuple[bytes, float]] = []
    else:
        vector_rows = [vector]
    codes = dict(cached.collection_codes)
    added = np.frombuffer(b"".join(v for v, _ in vector_rows), dtype=np.int8).reshape(
        len(vector_rows), model.STORED_DIMENSIONS
    )
    added_scales = np.array([s for _, s in vector_rows], np.float32)
    added_total, added_squares, _, added_bits = _derived(added, added_scales, cached.bits_centre)
    removed_total = np.zeros_like(cached.total)
    if position is not None:
        removed_total = cached.matrix[position].astype(np.float64) * cached.scales[position]
    if position is None and len(added) == 1 and cached.filled[0] == count < len(cached.matrix):
        # A new record, and this view ends where its buffers' writing ended: the row goes into
        # their room. Views taken before read only their own first rows, so they are unchanged.
        matrix, bits, filled = cached.matrix, cached.bits, cached.filled
        matrix[count], bits[count] = added[0], added_bits[0]
        filled[0] = count + 1
    else:
        matrix = _with_room(np.concatenate([cached.matrix[:count][keep], added]))
        bits = _with_room(np.concatenate([cached.bits[:count][keep], added_bits]))
        filled = [count - (position is not None) + len(added)]
    kept_ids = ids if position is None else ids[:position] + ids[position + 1 :]
    return ScopeVectors(
        key=after,
        record_ids=kept_ids + [record.pk] * len(vector_rows),
        collections=np.concatenate(
            [
                cached.collections[keep],
                np.array(
                    [codes.setdefault(record.collection_id, len(codes))] * len(vector_rows),
                    np.int32,
                ),
            ]
        ),
        collection_codes=codes,
        matrix=matrix,
        scales=np.concatenate([cached.scales[keep], added_scales]),
        squares=np.concatenate([cached.squares[keep], added_squares]),
        total=cached.total - removed_total + added_total,
        bits_centre=cached.bits_centre,
        bits=bits,
        filled=filled,
        pending=cached.pending,
    )


def _with_room(rows: np.ndarray) -> np.ndarray:
    """These rows in a new buffer with room after them (ROOM_SHARE, ROOM_MIN)."""
    room = max(ROOM_MIN, len(rows) // ROOM_SHARE)
    buffer = np.empty((len(rows) + room, *rows.shape[1:]), dtype=rows.dtype)
    buffer[: len(rows)] = rows
    return buffer


def forget_cached() -> None:
    """Drop every cached workspace (tests that roll the database back between them)."""
    _cache.clear()


def scope_vectors(workspace_id: str) -> ScopeVectors:
    """The workspace's vectors: every record embedded so far, and how many are still pending.

    Up to INLINE_CATCH_UP missing records are embedded here (a search never waits on more);
    more are left to the background catch-up, which this starts if none runs.
    """
    key = _counters(workspace_id)
    held = cached(workspace_id)
    if held is not None and held.key == key and not held.pending:
        return held
    if (
        held is not None
        and held.key[0] == key[0]
        and catching_up(workspace_id)
        and time.monotonic() - held.loaded_at < PENDING_RELOAD_S
    ):
        return held  # only the catch-up moved: what it stored since waits for the next load
    extra: list[RecordEmbedding] = []
    pending = 0
    if held is None or held.key[0] != key[0] or held.pending:
        missing = missing_record_ids(workspace_id)
        if len(missing) > INLINE_CATCH_UP or catching_up(workspace_id):
            start_catch_up(workspace_id)
            pending = len(missing)
        elif missing:
            extra = compute_for(missing)
            if _persist(extra):
                key, extra = _counters(workspace_id), []
            else:
                # A read-only snapshot (batch_read on PostgreSQL) cannot write: the vectors
                # serve this search from memory and a thread of its own stores them.
                start_catch_up(workspace_id)
    if held is not None and held.key == key:
        vectors = replace(held, pending=pending)
    else:
        vectors = replace(_load(workspace_id, key, extra), pending=pending)
    _cache.put(workspace_id, vectors.key, vectors)
    return vectors


def _persist(rows: list[RecordEmbedding]) -> bool:
    try:
        with transaction.atomic():
            save_embeddings(rows)
    except DatabaseError:
        return False
    return True


def _load(workspace_id: str, key: Key, extra: list[RecordEmbedding]) -> ScopeVectors:
    sql = (
        "SELECT e.record_id, r.collection_id, e.vector, e.scale "
        "FROM records_recordembedding e JOIN records_record r ON r.id = e.record_id "
        "WHERE e.workspace_id = %s AND r.archived_at IS NULL AND e.model_name = %s "
        "AND e.model_version = %s AND e.record_version = r.version"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [workspace_id, model.MODEL_NAME, model.model_version()])
        rows: list[tuple[Any, ...]] = list(cursor.fetchall())
    if extra:
        computed = {row.record_id for row in extra}
        collections = dict(
            Record.objects.filter(pk__in=computed, archived_at__isnull=True).values_list(
                "pk", "collection_id"
            )
        )
        rows = [row for row in rows if row[0] not in computed] + [
            (row.record_id, collections[row.record_id], row.vector, row.scale)
            for row in extra
            if row.record_id in collections
        ]
    rows = _readable(workspace_id, rows)
    codes: dict[str, int] = {}
    matrix = np.frombuffer(b"".join(bytes(row[2]) for row in rows), dtype=np.int8).reshape(
        len(rows), model.STORED_DIMENSIONS
    )
    scales = np.array([row[3] for row in rows], dtype=np.float32)
    total, squares, bits_centre, bits = _derived(matrix, scales, None)
    return ScopeVectors(
        key=key,
        record_ids=[row[0] for row in rows],
        collections=np.array([codes.setdefault(row[1], len(codes)) for row in rows], np.int32),
        collection_codes=codes,
        matrix=matrix,
        scales=scales,
        squares=squares,
        total=total,
        bits_centre=bits_centre,
        bits=bits,
        filled=[len(rows)],  # read-only and exactly full: the first write copies into room
    )


def _readable(workspace_id: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows that can be read; the others are reported and handed to the catch-up, so one
    damaged row costs its record, not the workspace's search by meaning."""
    kept = []
    for row in rows:
        vector = row[2]
        length = len(vector) if isinstance(vector, (bytes, bytearray, memoryview)) else None
        why = unreadable(length, row[3])
        if why is None:
            kept.append(row)
        else:
            report_unreadable(workspace_id, row[0], why)
    if len(kept) < len(rows):
        start_catch_up(workspace_id)
    return kept
