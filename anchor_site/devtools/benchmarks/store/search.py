"""Search at scale through search_records: a full-text search and a filtered page sorted by a
data field, each against the same question as plain SQL without the store's query layer (a
word-start scan, title matches first; the same filter, order and limit), on `records` records."""

from __future__ import annotations

from typing import Any

from django.db import connection

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat, timed, timed_row
from records.models import Record
from records.selectors import search_records

LIMIT = 20
TARGET_MS = 100


def generate(sizes: Sizes, ctx: Any) -> tuple[list[str], Row]:
    """Top the workspace up to sizes.records; returns (task collection IDs, row)."""
    existing = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    missing = max(0, sizes.records - existing)
    elapsed, _ = timed(lambda: data.add_tasks(ctx, sizes, missing))
    rate = f"; {missing / elapsed:,.0f} records/s" if missing and elapsed else ""
    what = f"generate {missing:,} records (bulk SQL, as record_create leaves them)"
    note = f"{existing:,} stored before (the long history's among them){rate}"
    return data.task_collections(ctx, sizes.collections), Row(what, elapsed, "s", note=note)


def scan_sql(word: str) -> tuple[str, list[str | int]]:
    """The full-text question as a plain scan: word start, title or data text, same page."""
    # The index matches words that start with the query word (a prefix query), so does this.
    pattern = rf"(?i)\b{word}" if connection.vendor == "sqlite" else rf"\m{word}"
    if connection.vendor == "sqlite":  # REGEXP is the Python function Django registers
        title, body = "r.title REGEXP %s", "r.data REGEXP %s"
    else:
        title, body = "r.title ~* %s", "r.data::text ~* %s"
    sql = (
        f"SELECT r.id FROM records_record r WHERE r.workspace_id = %s "
        f"AND r.archived_at IS NULL AND ({title} OR {body}) "
        f"ORDER BY CASE WHEN {title} THEN 0 ELSE 1 END, r.id LIMIT %s"
    )
    return sql, [data.WORKSPACE, pattern, pattern, pattern, LIMIT + 1]


def sorted_sql(collection_id: str) -> tuple[str, list[str | int]]:
    """The sorted page as one plain statement: status = 'open', amount descending, 20 + 1."""
    if connection.vendor == "sqlite":
        status = "json_extract(r.data, '$.status')"
        amount = "CAST(json_extract(r.data, '$.amount') AS REAL)"
    else:
        status, amount = "r.data ->> 'status'", "(r.data ->> 'amount')::numeric"
    sql = (
        f"SELECT r.id, r.title, r.data FROM records_record r WHERE r.collection_id = %s "
        f"AND r.archived_at IS NULL AND {status} = 'open' ORDER BY {amount} DESC, r.id LIMIT %s"
    )
    return sql, [collection_id, LIMIT + 1]


def _fetch(sql: str, params: list[str | int]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def run(sizes: Sizes, ctx: Any) -> list[Row]:
    collections, generated = generate(sizes, ctx)
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    words = data.vocabulary()
    word = words[len(words) // 2]

    def text_search() -> dict[str, Any]:
        return search_records(workspace_id=data.WORKSPACE, text=word, limit=LIMIT)

    def sorted_page() -> dict[str, Any]:
        return search_records(
            workspace_id=data.WORKSPACE,
            collection_id=collections[0],
            where=[{"field": ["status"], "op": "eq", "value": "open"}],
            order_by={"field": ["amount"], "type": "number", "direction": "desc"},
            limit=LIMIT,
        )

    scan = scan_sql(word)
    plain = sorted_sql(collections[0])
    first = text_search()
    found = sorted_page()
    scanned_ids = [row[0] for row in _fetch(*scan)]
    plain_ids = [row[0] for row in _fetch(*plain)]
    searched = repeat(text_search, sizes.repeat)
    paged = repeat(sorted_page, sizes.repeat)
    scanned = repeat(lambda: _fetch(*scan), max(3, sizes.reference_repeat))
    plained = repeat(lambda: _fetch(*plain), max(3, sizes.repeat))
    per_collection = Record.objects.filter(collection_id=collections[0]).count()
    on_page = {r["record_id"] for r in first["records"]}
    sorted_same = [r["record_id"] for r in found["records"]] == plain_ids[:LIMIT]
    return [
        generated,
        timed_row(
            f"full-text search, one word, first page of {LIMIT}, {total:,} records",
            searched,
            under_ms=TARGET_MS,
            reference=scanned.median_ms,
            reference_what=f"the same word, page and fields by a plain scan (word-start match "
            f"in title or data text, title matches first, LIMIT {LIMIT + 1})",
            note=f"{first['count']} results, has_more={first['has_more']}; the scan's page "
            f"holds {len(scanned_ids[:LIMIT])}, {len(on_page & set(scanned_ids))} of them the "
            "index's",
        ),
        timed_row(
            f"filtered page sorted by a number field, collection of {per_collection:,} in "
            f"{total:,} records",
            paged,
            under_ms=TARGET_MS,
            reference=plained.median_ms,
            reference_what="the same filter, order and limit as one plain SQL statement",
            note=f"{found['count']} results; "
            + ("the same page as the plain statement" if sorted_same else "pages differ"),
        ),
    ]
