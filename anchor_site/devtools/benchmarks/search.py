"""Search at scale: bulk-generate the workspace up to `records` records, then time a full-text
search and a filtered page sorted by a data field through search_records.

The reference is the query the store would need without its indexes, timed in the same run:
a scan of every title for the same word (LIKE '%word%').
"""

from __future__ import annotations

import time

from django.db import connection

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from records.models import Record
from records.selectors import search_records

AREA = "search"


def generate(sizes: Sizes, ctx) -> tuple[list[str], list[str], Row]:
    """Fill the workspace up to sizes.records; returns (collection IDs, vocabulary, row)."""
    vocabulary = data.words(5000, seed=11)
    existing = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    missing = max(0, sizes.records - existing)
    collections = [data.collection(ctx, f"bench tasks {i}").pk for i in range(sizes.collections)]
    started = time.perf_counter()
    per = missing // len(collections)
    for index, collection_id in enumerate(collections):
        count = per if index else missing - per * (len(collections) - 1)
        data.bulk_insert(collection_id, data.tasks(count, vocabulary, seed=index))
    elapsed = time.perf_counter() - started
    row = Row(
        AREA,
        f"generate {missing:,} records (bulk SQL, as record_create leaves them)",
        elapsed,
        "s",
        note=f"{missing / elapsed:,.0f} records/s" if elapsed else "",
    )
    return collections, vocabulary, row


def run(sizes: Sizes, ctx) -> list[Row]:
    collections, vocabulary, generated = generate(sizes, ctx)
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    word = vocabulary[len(vocabulary) // 2]

    def text_search():
        return search_records(workspace_id=data.WORKSPACE, text=word, limit=20)

    def sorted_page():
        return search_records(
            workspace_id=data.WORKSPACE,
            collection_id=collections[0],
            where=[{"field": ["status"], "op": "eq", "value": "open"}],
            order_by={"field": ["amount"], "type": "number", "direction": "desc"},
            limit=20,
        )

    def scan():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM records_record WHERE workspace_id = %s AND title LIKE %s",
                [data.WORKSPACE, f"%{word}%"],
            )
            return cursor.fetchone()

    first = text_search()
    found = sorted_page()
    searched = repeat(text_search, sizes.repeat)
    paged = repeat(sorted_page, sizes.repeat)
    scanned = repeat(scan, max(3, sizes.reference_repeat))
    per_collection = Record.objects.filter(collection_id=collections[0]).count()
    return [
        generated,
        Row(
            AREA,
            f"full-text search, one word, first page of 20, {total:,} records",
            searched.median_ms,
            "ms",
            p95=searched.p95_ms,
            target="< 100 ms",
            passed=searched.median_ms < 100,
            reference=scanned.median_ms,
            reference_what="title scan LIKE '%word%' (no index)",
            note=f"{first['count']} results, has_more={first['has_more']}",
        ),
        Row(
            AREA,
            f"filtered page sorted by a number field, collection of {per_collection:,} in "
            f"{total:,} records",
            paged.median_ms,
            "ms",
            p95=paged.p95_ms,
            target="< 100 ms",
            passed=paged.median_ms < 100,
            reference=scanned.median_ms,
            reference_what="title scan LIKE '%word%' (no index)",
            note=f"{found['count']} results",
        ),
    ]
