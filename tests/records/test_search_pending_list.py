"""The full-text index's pending list stays small after a bulk write (PostgreSQL)."""

from __future__ import annotations

import pytest
from django.db import connection

from records import services
from records.services import NewRecord
from tests.conftest import make_collection

# 64 kB of 8 kB pages: what migration 0012 allows the pending list to hold before a merge.
MOST_PENDING_PAGES = 8


def pending_pages_cleaned() -> int:
    """Merge the pending list into the index now; how many pages it held."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list('records_record_search_gin')")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_the_full_text_index_keeps_a_small_pending_list(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'records_record_search_gin'"
        )
        assert cursor.fetchone()[0] == ["gin_pending_list_limit=64"]


@pytest.mark.postgres
def test_a_bulk_write_leaves_few_entries_for_every_search_to_read(ctx):
    notes = make_collection(ctx, "ops log", "What we did this week")
    pending_pages_cleaned()
    rows = [
        NewRecord(
            ctx=ctx,
            title=f"Deploy {n}: rolled the staging cluster forward",
            data={"notes": f"runner {n} moved, alert {n * 7} fixed, backup key {n * 13} rotated"},
        )
        for n in range(1500)
    ]
    services.record_create_many(collection_id=notes.pk, rows=rows)
    # At the default 4 MB these rows stay pending (over 20 pages) until a vacuum.
    assert pending_pages_cleaned() <= MOST_PENDING_PAGES
