"""search_records in mode "meaning": full-text rank and embedding similarity, fused.

Two rankings of the records that meet every other criterion: by words (the full-text rank,
as mode "words" orders them) and by meaning (cosine similarity of the text's embedding to the
nearer of the record's title and whole-text embeddings, centred as records.meaning.index says,
at least MIN_SIMILARITY). Each keeps its best DEPTH; reciprocal rank fusion
(1 / (RRF_K + rank), summed) orders their union, and every hit says which ranking found it.
A hit found by meaning is related to the question, never evidence of which record a name
means: resolve_record, the one source of identity, does not use meaning at all.

While records written in bulk are being embedded in the background, those embedded so far
are ranked by meaning and the rest by words alone, and `note` says how many are pending.
Every page carries a `confidence` (strong, weak or none: nothing fits) from the best
similarity's place in the store's own distribution (`confidence`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from records.errors import invalid
from records.meaning import calibration
from records.meaning.index import query_vector, scope_vectors
from records.models import Record
from records.selectors.conditions import Criteria, criteria_sql
from records.selectors.cursors import decode_cursor, encode_cursor, fingerprint
from records.selectors.fulltext import ranked_source, snippets
from records.selectors.search_pages import COLUMNS, record_item
from records.selectors.sql import Sql, all_of, fetch_all, prepare_connection

DEPTH = 100
# Scanned by meaning before the other criteria are applied, at most; enough for DEPTH hits
# unless the criteria keep fewer than one nearest record in four.
SCANNED = 400
CHECK_BATCH = 500
# Cosine similarity below which a record is not offered as related. Measured on the labelled
# set (records/meaning/calibration): the record a question in other words expects scores 0.15
# or more for 95 % of them (median 0.32). A floor cannot tell an unrelated question apart: its
# nearest records still score 0.25-0.36 ("banana smoothie recipe"); the page's confidence
# weighs that against the store (`confidence`).
MIN_SIMILARITY = 0.15
RRF_K = 60
MEANING_EVIDENCE = "related, not identity evidence"
ORDER = (
    "best combined rank first: text match and meaning, fused by reciprocal rank; `matched` "
    "says which found each record"
)
PENDING_NOTE = (
    "{pending} records written in bulk are still being embedded: until then they are found "
    "by words only. Search again shortly to rank them by meaning too."
)


def meaning_search(
    workspace_id: str, criteria: Criteria, text: str, cursor: Any, limit: int
) -> dict[str, Any]:
    """`text` is embedded as it was typed: joining its words alone, or any prefix, cost recall."""
    assert criteria.words is not None
    bound_to = fingerprint(
        "search", workspace_id, {**criteria.fingerprint_params(), "mode": "meaning", "asked": text}
    )
    key = decode_cursor(cursor, bound_to, key_length=3)
    if key is not None and key[0] != "meaning":
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    vectors = scope_vectors(workspace_id)
    by_words = _words_ranking(workspace_id, criteria)
    asked = query_vector(text)
    nearest = vectors.nearest(
        asked, collection_id=criteria.collection_id, limit=SCANNED, min_similarity=MIN_SIMILARITY
    )
    typical, count = vectors.typical(asked, collection_id=criteria.collection_id)
    by_meaning = _meeting_criteria(workspace_id, criteria, nearest)
    fused = _fuse(by_words, [record_id for record_id, _ in by_meaning])
    if key is not None:
        fused = [hit for hit in fused if _after(hit, key)]
    shown, has_more = fused[:limit], len(fused) > limit
    similarity = dict(by_meaning)
    page = {
        "records": _items(workspace_id, criteria.words, shown, set(by_words), similarity),
        "count": len(shown),
        "has_more": has_more,
        "next_cursor": encode_cursor(bound_to, ["meaning", shown[-1][0], shown[-1][1]])
        if has_more
        else None,
        "order": ORDER,
        "mode": "meaning",
        "confidence": confidence(
            by_meaning[0][1] if by_meaning else -1.0, typical, count, by_words
        ),
    }
    if vectors.pending:
        page["note"] = PENDING_NOTE.format(pending=vectors.pending)
    return page


def confidence(best: float, typical: float, count: int, by_words: list[str]) -> str:
    """ "strong", "weak" or "none" (nothing in the store fits the question).

    The best similarity, plus its weight times the question's mean similarity to the store
    (records.meaning.index: an unrelated question is far from all of it), against a floor
    that rises with the log of the records searched (more records, a higher best by chance).
    Calibrated on the labelled set (records/meaning/calibration/thresholds.json). A record
    that matches every word of the question is evidence enough for "weak".
    """
    limits = calibration.thresholds()
    score = best + limits["typical_weight"] * typical
    floor = limits["none_below"] + limits["per_decade"] * math.log10(max(count, 10) / 1000)
    if score >= floor + limits["strong_margin"]:
        return "strong"
    return "weak" if score >= floor or by_words else "none"


def _words_ranking(workspace_id: str, criteria: Criteria) -> list[str]:
    """The DEPTH best records by full-text rank, as mode "words" orders them."""
    assert criteria.words is not None
    source, join, rank = ranked_source(criteria.words)
    where = criteria_sql(workspace_id, criteria, rank_joined=True)
    sql = Sql(
        f"SELECT r.id FROM {source.text} {join.text} WHERE {where.text} "
        f"ORDER BY {rank}, r.id LIMIT %s",
        source.params + join.params + where.params + (DEPTH,),
    )
    prepare_connection()
    return [row[0] for row in fetch_all(sql)]


def _meeting_criteria(
    workspace_id: str, criteria: Criteria, nearest: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The nearest records that meet every criterion but the words, best first, up to DEPTH.

    The cached vectors are the workspace's active records and nearest() kept the collection,
    so without other criteria there is nothing left to check in the database.
    """
    if not (criteria.query or criteria.filters or criteria.where or criteria.linked_to):
        return nearest[:DEPTH]
    others = criteria_sql(workspace_id, replace(criteria, words=None))
    kept: list[tuple[str, float]] = []
    for start in range(0, len(nearest), CHECK_BATCH):
        batch = nearest[start : start + CHECK_BATCH]
        marks = ", ".join(["%s"] * len(batch))
        condition = all_of([others, Sql(f"r.id IN ({marks})", tuple(i for i, _ in batch))])
        found = {
            row[0]
            for row in fetch_all(
                Sql(f"SELECT r.id FROM records_record r WHERE {condition.text}", condition.params)
            )
        }
        kept += [hit for hit in batch if hit[0] in found]
        if len(kept) >= DEPTH:
            break
    return kept[:DEPTH]


def _fuse(by_words: list[str], by_meaning: list[str]) -> list[tuple[float, str]]:
    """(fused score, record_id), best first, ties by record_id."""
    scores: dict[str, float] = {}
    for ranking in (by_words, by_meaning):
        for rank, record_id in enumerate(ranking, start=1):
            scores[record_id] = scores.get(record_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(
        ((score, record_id) for record_id, score in scores.items()),
        key=lambda hit: (-hit[0], hit[1]),
    )


def _after(hit: tuple[float, str], key: list[Any]) -> bool:
    score, record_id = key[1], key[2]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    if not isinstance(record_id, str):
        raise invalid("cursor", "is malformed; pass next_cursor unchanged.")
    return hit[0] < score or (hit[0] == score and hit[1] > record_id)


def _items(
    workspace_id: str,
    words: list[str],
    shown: list[tuple[float, str]],
    by_words: set[str],
    similarity: dict[str, float],
) -> list[dict[str, Any]]:
    ids = [record_id for _, record_id in shown]
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    # By primary key alone, the workspace checked on each row: with the workspace in the WHERE
    # clause SQLite walks the workspace's index instead of looking the page's rows up.
    rows = {
        row.pk: row
        for row in Record.objects.raw(
            f"SELECT {COLUMNS}, r.workspace_id FROM records_record r "
            "JOIN records_collection c ON c.id = r.collection_id "
            f"WHERE r.id IN ({marks})",
            ids,
        )
        if row.workspace_id == workspace_id
    }
    found_snippets = snippets(words, [i for i in ids if i in by_words])
    items = []
    for record_id in ids:
        if record_id not in rows:
            continue  # deleted since it was ranked
        item = record_item(rows[record_id])
        in_words, in_meaning = record_id in by_words, record_id in similarity
        item["matched"] = "both" if in_words and in_meaning else "words" if in_words else "meaning"
        if in_words:
            item["match_snippet"] = found_snippets.get(record_id, "")
        if in_meaning:
            item["similarity"] = round(similarity[record_id], 3)
            item["evidence"] = MEANING_EVIDENCE
        items.append(item)
    return items
