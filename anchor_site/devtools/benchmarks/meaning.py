"""Search by meaning: latency and memory at 100,000 records, and recall@10 per mode.

Latency: the benchmark workspace is filled up to `meaning_records` active records and their
embeddings are made: `meaning_embedded` of them by the model, as the catch-up after a bulk load
does (its rate is a row), the rest as copies of those vectors (a search scores every vector
alike, whatever its values, and the model would take about 10 minutes for 100,000 records).
search_records in mode "meaning" is then timed with the vectors cached, beside mode "words"
for the same text in the same run (the reference). Memory is what the cached vectors hold.

Recall@10 over the labelled set (meaning_set.py: a team's store of a few thousand records and
questions asked in other words or in the record's own words; `--quick` loads every target but
only `recall_filler` of the filler) in a workspace of its own: the
share of questions with an expected title among the first 10 hits, for words (mode "words"),
meaning alone (the nearest embeddings) and hybrid (mode "meaning"), per kind of question.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from records import services
from records.errors import AnchorError
from records.meaning import index, model
from records.meaning.embeddings import compute_for, missing_record_ids, save_embeddings
from records.models import Record, RecordEmbedding
from records.selectors import search_records
from records.services import CollectionFields, NewRecord, WriteContext

AREA = "meaning"
SET_WORKSPACE = "bench-meaning-set"
COPY_BATCH = 5000
LATENCY_TARGET_MS = 50.0
MEMORY_TARGET_MB = 150.0
QUESTION = "what did we decide about the sign-in flow"
TOP = 10
MODES = ("words", "meaning", "hybrid")


def run(sizes: Sizes, ctx: WriteContext) -> list[Row]:
    return latency_rows(sizes, ctx) + recall_rows(sizes.recall_filler)


# --- latency and memory -----------------------------------------------------------------------


def catch_up(workspace_id: str) -> int:
    """Embed every missing record of the workspace, as the background catch-up does."""
    ids = missing_record_ids(workspace_id)
    for start in range(0, len(ids), 5000):
        save_embeddings(compute_for(ids[start : start + 5000]))
    return len(ids)


def latency_rows(sizes: Sizes, ctx: WriteContext) -> list[Row]:
    active = Record.objects.filter(workspace_id=data.WORKSPACE, archived_at=None).count()
    missing = max(0, sizes.meaning_records - active)
    if missing:
        collection = data.collection(ctx, "bench meaning tasks")
        data.bulk_insert(collection.pk, data.tasks(missing, data.words(5000, seed=23), seed=32))
    total = Record.objects.filter(workspace_id=data.WORKSPACE, archived_at=None).count()
    unembedded = missing_record_ids(data.WORKSPACE)
    # A run on data an earlier run embedded times the model on records already embedded.
    sample = unembedded[: sizes.meaning_embedded] or list(
        Record.objects.filter(workspace_id=data.WORKSPACE, archived_at=None)
        .order_by("pk")
        .values_list("pk", flat=True)[: sizes.meaning_embedded]
    )
    started = time.perf_counter()
    save_embeddings(compute_for(sample))
    embedding_s = time.perf_counter() - started
    copied = copy_embeddings(data.WORKSPACE, sample, unembedded[sizes.meaning_embedded :])
    index.forget_cached()
    tracemalloc.start()
    started = time.perf_counter()
    vectors = index.scope_vectors(data.WORKSPACE)
    load_s = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert vectors is not None
    held_mb = vectors.nbytes() / 1e6

    def by(mode: str) -> Callable[[], Any]:
        return lambda: search_records(workspace_id=data.WORKSPACE, text=QUESTION, mode=mode)

    hybrid = repeat(by("meaning"), sizes.repeat)
    words = repeat(by("words"), sizes.repeat)
    notes = data.collection(ctx, "bench meaning notes")
    written = iter(range(10**6))

    def write_then_search() -> Any:
        n = next(written)
        services.record_create(
            ctx=ctx, collection_id=notes.pk, title=f"Sign-in note {n}", data={"n": n}
        )
        return by("meaning")()

    after_write = repeat(write_then_search, sizes.repeat)
    shortlist = "sign-bit shortlist, then int8 rerank" if total >= index.SHORTLIST_FROM else "int8"
    return [
        Row(
            AREA,
            f"embed {len(sample):,} records written in bulk (catch-up)",
            embedding_s,
            "s",
            note=(
                f"{len(sample) / embedding_s:,.0f} records/s on one core"
                + (f"; {copied:,} more given copies of these vectors" if copied else "")
                if embedding_s
                else ""
            ),
        ),
        Row(
            AREA,
            f"load a workspace's vectors after a change, {total:,} records",
            load_s * 1000,
            "ms",
            note=f"peak {peak / 1e6:.0f} MB while loading",
        ),
        Row(
            AREA,
            f"search by meaning (mode meaning), first page of 20, {total:,} records",
            hybrid.median_ms,
            "ms",
            p95=hybrid.p95_ms,
            target=f"<= {LATENCY_TARGET_MS:.0f} ms",
            passed=hybrid.median_ms <= LATENCY_TARGET_MS,
            reference=words.median_ms,
            reference_what="mode words, same text",
            note=shortlist,
        ),
        Row(
            AREA,
            f"record_create, then search by meaning, {total:,} records",
            after_write.median_ms,
            "ms",
            p95=after_write.p95_ms,
            reference=hybrid.median_ms,
            reference_what="search by meaning alone",
            note="the write patches the cached vectors; no reload",
        ),
        Row(
            AREA,
            f"memory of the cached vectors, {len(vectors):,} records",
            held_mb,
            "MB",
            target=f"< {MEMORY_TARGET_MB:.0f} MB",
            passed=held_mb < MEMORY_TARGET_MB,
        ),
    ]


def copy_embeddings(workspace_id: str, sources: list[str], targets: list[str]) -> int:
    """Give each target record a stored copy of a source record's embedding; how many."""
    if not sources or not targets:
        return 0
    vectors = list(
        RecordEmbedding.objects.filter(record_id__in=sources).values_list("vector", "scale")
    )
    model_name, model_version = model.MODEL_NAME, model.model_version()
    now = timezone.now()
    for start in range(0, len(targets), COPY_BATCH):
        batch = targets[start : start + COPY_BATCH]
        versions = dict(Record.objects.filter(pk__in=batch).values_list("pk", "version"))
        save_embeddings(
            [
                RecordEmbedding(
                    record_id=record_id,
                    workspace_id=workspace_id,
                    model_name=model_name,
                    model_version=model_version,
                    record_version=versions[record_id],
                    vector=vectors[(start + n) % len(vectors)][0],
                    scale=vectors[(start + n) % len(vectors)][1],
                    computed_at=now,
                )
                for n, record_id in enumerate(batch)
            ]
        )
    return len(targets)


# --- recall@10 over the labelled set -------------------------------------------------------------


def recall_rows(filler: int = 0) -> list[Row]:
    try:
        from anchor_site.devtools.benchmarks import meaning_set
    except ImportError:
        return [Row(AREA, "recall@10", None, "%", note="labelled set (meaning_set.py) missing")]
    workspace_id = load_set(meaning_set, filler)
    recall = measure_recall(workspace_id, meaning_set.queries())
    return recall_table(recall)


def set_records(meaning_set: Any, filler: int = 0) -> list[Any]:
    """The labelled store: every target (a record some question expects), then the filler,
    all of it or its first `filler` records."""
    expected = {title for query in meaning_set.queries() for title in query.expected}
    records = meaning_set.store()
    targets = [record for record in records if record.title in expected]
    rest = [record for record in records if record.title not in expected]
    return targets + (rest[:filler] if filler else rest)


def load_set(meaning_set: Any, filler: int = 0) -> str:
    """The labelled store in its own workspace, bulk-written then embedded; its ID.

    A workspace per filler size, so a quick run's smaller store is never taken for the whole.
    """
    workspace_id = f"{SET_WORKSPACE}-{filler}" if filler else SET_WORKSPACE
    services.workspace_ensure(workspace_id)
    ctx = WriteContext(workspace_id=workspace_id, actor_id=data.ACTOR, decision_reason="set")
    if not Record.objects.filter(workspace_id=workspace_id).exists():
        ids = {}
        for name, description in meaning_set.collections().items():
            ids[name] = services.collection_create(
                ctx=ctx,
                fields=CollectionFields.validated(
                    name=name,
                    purpose=description,
                    record_meaning=f"One of the {name}",
                    typical_fields=["notes"],
                    relationship_guidance="",
                ),
            ).pk
        by_collection: dict[str, list[NewRecord]] = {}
        for record in set_records(meaning_set, filler):
            by_collection.setdefault(record.collection, []).append(
                NewRecord(ctx=ctx, title=record.title, data=record.data)
            )
        for name, rows in by_collection.items():
            services.record_create_many(collection_id=ids[name], rows=rows)
    catch_up(workspace_id)
    return workspace_id


def top_titles(workspace_id: str, text: str, mode: str) -> list[str]:
    if mode == "meaning":  # the embeddings alone, no words
        vectors = index.scope_vectors(workspace_id)
        assert vectors is not None
        nearest = vectors.nearest(
            index.query_vector(text), collection_id=None, limit=TOP, min_similarity=-1.0
        )
        ids = [record_id for record_id, _ in nearest]
        found = dict(Record.objects.filter(pk__in=ids).values_list("pk", "title"))
        return [found[i] for i, _ in nearest]
    try:
        page = search_records(
            workspace_id=workspace_id,
            text=text,
            limit=TOP,
            mode="meaning" if mode == "hybrid" else "words",
        )
    except AnchorError:  # a question with no letters or digits: nothing found by words
        return []
    return [item["title"] for item in page["records"]]


def measure_recall(workspace_id: str, queries: list[Any]) -> dict[tuple[str, str], list[bool]]:
    """(mode, kind) -> for each question of that kind, whether an expected title was in the top."""
    found: dict[tuple[str, str], list[bool]] = {}
    for query in queries:
        expected = set(query.expected)
        for mode in MODES:
            hit = bool(expected & set(top_titles(workspace_id, query.text, mode)))
            found.setdefault((mode, query.kind), []).append(hit)
    return found


def recall_table(found: dict[tuple[str, str], list[bool]]) -> list[Row]:
    def share(mode: str, kind: str) -> float:
        hits = found.get((mode, kind), [])
        return 100.0 * sum(hits) / len(hits) if hits else 0.0

    rows = []
    for kind in ("other_words", "same_words"):
        count = len(found.get(("words", kind), []))
        words = share("words", kind)
        for mode in MODES:
            value = share(mode, kind)
            target, passed = "", None
            if mode == "hybrid" and kind == "other_words":
                target, passed = f">= words + 20 ({words + 20:.0f} %)", value >= words + 20
            elif mode == "hybrid":
                target, passed = f">= words ({words:.0f} %)", value >= words
            rows.append(
                Row(
                    AREA,
                    f"recall@{TOP}, {kind.replace('_', ' ')} ({count} questions), {mode}",
                    round(value, 1),
                    "%",
                    target=target,
                    passed=passed,
                    reference=words if mode != "words" and words else None,
                    reference_what="words" if mode != "words" else "",
                )
            )
    return rows
