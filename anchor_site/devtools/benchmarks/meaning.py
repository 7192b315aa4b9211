"""Search by meaning: latency and memory at 100,000 records, and recall@10 per mode.

Latency: the benchmark workspace is filled up to `meaning_records` active records, every
embedding is computed (the catch-up a bulk load needs), and search_records in mode "meaning"
is timed with the vectors cached, beside mode "words" for the same text in the same run (the
reference). Memory is what the cached vectors of the workspace hold.

Recall@10 over the labelled set (meaning_set.py: a team's store of a few thousand records and
questions asked in other words or in the record's own words) in a workspace of its own: the
share of questions with an expected title among the first 10 hits, for words (mode "words"),
meaning alone (the nearest embeddings) and hybrid (mode "meaning"), per kind of question.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from records import services
from records.errors import AnchorError
from records.meaning import index
from records.meaning.embeddings import compute_for, missing_record_ids, save_embeddings
from records.models import Record
from records.selectors import search_records
from records.services import CollectionFields, NewRecord, WriteContext

AREA = "meaning"
SET_WORKSPACE = "bench-meaning-set"
LATENCY_TARGET_MS = 50.0
MEMORY_TARGET_MB = 150.0
QUESTION = "what did we decide about the sign-in flow"
TOP = 10
MODES = ("words", "meaning", "hybrid")


def run(sizes: Sizes, ctx: WriteContext) -> list[Row]:
    return latency_rows(sizes, ctx) + recall_rows()


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
    started = time.perf_counter()
    embedded = catch_up(data.WORKSPACE)
    embedding_s = time.perf_counter() - started
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
            f"embed {embedded:,} records written in bulk (catch-up)",
            embedding_s,
            "s",
            note=f"{embedded / embedding_s:,.0f} records/s" if embedding_s else "",
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


# --- recall@10 over the labelled set -------------------------------------------------------------


def recall_rows() -> list[Row]:
    try:
        from anchor_site.devtools.benchmarks import meaning_set
    except ImportError:
        return [Row(AREA, "recall@10", None, "%", note="labelled set (meaning_set.py) missing")]
    workspace_id = load_set(meaning_set)
    recall = measure_recall(workspace_id, meaning_set.queries())
    return recall_table(recall)


def load_set(meaning_set: Any) -> str:
    """The labelled store in its own workspace, bulk-written then embedded; its ID."""
    services.workspace_ensure(SET_WORKSPACE)
    ctx = WriteContext(workspace_id=SET_WORKSPACE, actor_id=data.ACTOR, decision_reason="set")
    if not Record.objects.filter(workspace_id=SET_WORKSPACE).exists():
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
        for record in meaning_set.store():
            by_collection.setdefault(record.collection, []).append(
                NewRecord(ctx=ctx, title=record.title, data=record.data)
            )
        for name, rows in by_collection.items():
            services.record_create_many(collection_id=ids[name], rows=rows)
    catch_up(SET_WORKSPACE)
    return SET_WORKSPACE


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
