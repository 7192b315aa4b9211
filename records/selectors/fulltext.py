"""Full-text matching: our own tokenising, then per-backend match, rank and snippet SQL.

The caller's text is split into words here and each word is quoted, so FTS operators and
punctuation (AND, NEAR, -, :, *) are plain text. Every word must match, each as a prefix.
SQLite: FTS5 (unicode61, diacritics removed), BM25 with the title weighted 4 to the body's 1.
PostgreSQL: the weighted tsvector (title A, values B) with unaccent; ts_rank with A = 4 x B.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from django.db import connection

from records.errors import UNSUPPORTED, AnchorError, invalid
from records.selectors.sql import Sql, fetch_all, vendor

MAX_TEXT_LENGTH = 300
MAX_WORDS = 16
SNIPPET_CHARS = 300
WORD = re.compile(r"[^\W_]+")
# {D, C, B, A}: title (A) weighs four times values (B), as BM25's 4.0 / 1.0 does on SQLite.
PG_WEIGHTS = "'{0.1, 0.2, 0.25, 1.0}'"
PG_BODY = (
    "(SELECT string_agg(v #>> '{}', ' ') FROM jsonb_path_query(r.data, 'strict $.**') AS v "
    "WHERE jsonb_typeof(v) IN ('string', 'number'))"
)
PG_HEADLINE_OPTIONS = (
    'StartSel=[, StopSel=], MaxWords=20, MinWords=6, MaxFragments=2, FragmentDelimiter=" … "'
)


def text_words(value: Any) -> list[str]:
    if not isinstance(value, str):
        raise invalid("text", f"must be a string, got {type(value).__name__}; omit it to skip.")
    if len(value) > MAX_TEXT_LENGTH:
        raise invalid("text", f"is {len(value)} characters; the limit is {MAX_TEXT_LENGTH}.")
    words = WORD.findall(unicodedata.normalize("NFC", value))
    if not words:
        raise invalid(
            "text", "has no letters or digits to search for; omit it or give words to find."
        )
    return words[:MAX_WORDS]


def require_fulltext() -> None:
    if vendor() != "sqlite":
        return
    if "records_record_fts" not in connection.introspection.table_names():
        raise AnchorError(
            UNSUPPORTED,
            "text: this server's SQLite build has no FTS5, so full-text search is "
            "unavailable. Use query (title substring), filters or where instead.",
            field="text",
        )


def _sqlite_match(words: list[str]) -> str:
    return " ".join(f'"{word}"*' for word in words)


def _pg_query(words: list[str]) -> str:
    return " & ".join(f"'{word}':*" for word in words)


def matching_ids(words: list[str]) -> Sql:
    """A condition on r.id: the record's title or values match every word."""
    if vendor() == "sqlite":
        return Sql(
            "r.id IN (SELECT k.record_id FROM records_record_fts "
            "JOIN records_record_fts_key k ON k.id = records_record_fts.rowid "
            "WHERE records_record_fts MATCH %s)",
            (_sqlite_match(words),),
        )
    return Sql(
        "r.id IN (SELECT s.record_id FROM records_record_search s "
        "WHERE s.document @@ to_tsquery('simple', unaccent(%s)))",
        (_pg_query(words),),
    )


def ranked_source(words: list[str]) -> tuple[Sql, Sql, str]:
    """(the FROM item that yields records r, a JOIN clause after it, the rank expression).

    A lower rank is a better match. On PostgreSQL the matching documents are found first
    through the GIN index and each match then fetches its record by primary key: the LATERAL
    subquery (OFFSET 0 keeps it from being flattened) fixes that join order whatever the
    statistics say. Without it, on tables not yet analyzed (right after a bulk load) the
    planner estimated one active record, walked every record and tested each document with
    @@ as a join filter: ~1 s at 100,000 records instead of ~10 ms.
    """
    if vendor() == "sqlite":
        join = Sql(
            "JOIN records_record_fts_key fts_key ON fts_key.record_id = r.id "
            "JOIN (SELECT rowid AS fts_rowid, bm25(records_record_fts, 4.0, 1.0) AS fts_rank "
            "FROM records_record_fts WHERE records_record_fts MATCH %s) fts "
            "ON fts.fts_rowid = fts_key.id",
            (_sqlite_match(words),),
        )
        return Sql("records_record r"), join, "fts.fts_rank"
    # float8: a float4 rank would come back rounded and never equal itself in a cursor.
    source = Sql(
        f"(SELECT s.record_id, -(ts_rank({PG_WEIGHTS}, s.document, fts.query))::float8 "
        "AS text_rank FROM (SELECT to_tsquery('simple', unaccent(%s)) AS query OFFSET 0) fts "
        "JOIN records_record_search s ON s.document @@ fts.query) fts_match "
        "CROSS JOIN LATERAL (SELECT * FROM records_record "
        "WHERE records_record.id = fts_match.record_id OFFSET 0) r",
        (_pg_query(words),),
    )
    return source, Sql(""), "fts_match.text_rank"


def snippets(words: list[str], record_ids: list[str]) -> dict[str, str]:
    """Matched words in [brackets], for one page of results only."""
    if not record_ids:
        return {}
    marks = ", ".join(["%s"] * len(record_ids))
    if vendor() == "sqlite":
        sql = Sql(
            "SELECT k.record_id, snippet(records_record_fts, -1, '[', ']', ' … ', 16) "
            "FROM records_record_fts JOIN records_record_fts_key k "
            "ON k.id = records_record_fts.rowid "
            f"WHERE records_record_fts MATCH %s AND k.record_id IN ({marks})",
            (_sqlite_match(words), *record_ids),
        )
    else:
        # unaccent folds the shown text too (Zoë shows as Zoe): the index has no accented form
        # of the words to highlight against.
        sql = Sql(
            "SELECT r.id, ts_headline('simple', "
            f"unaccent(r.title || ' — ' || coalesce({PG_BODY}, '')), "
            "to_tsquery('simple', unaccent(%s)), %s) "
            f"FROM records_record r WHERE r.id IN ({marks})",
            (_pg_query(words), PG_HEADLINE_OPTIONS, *record_ids),
        )
    return {record_id: text[:SNIPPET_CHARS] for record_id, text in fetch_all(sql)}
