"""batch_read's searches by meaning inside its read-only snapshot: records a bulk write left
without embeddings are still found, and their embeddings are stored outside the snapshot."""

from __future__ import annotations

import pytest

from records import services
from records.meaning import embeddings
from records.meaning.embeddings import missing_record_ids
from records.services import NewRecord, WriteContext
from tests.conftest import WORKSPACE, make_collection
from tests.polling import wait_until
from tests.workflow.helpers import ok


@pytest.mark.django_db(transaction=True)
def test_a_batch_finds_bulk_written_records_by_meaning_and_they_get_stored(monkeypatch):
    # As if the bulk write's own background embedding had not begun (another process wrote).
    monkeypatch.setattr(embeddings, "start_catch_up", lambda workspace_id: None)
    services.workspace_ensure(WORKSPACE)
    ctx = WriteContext(workspace_id=WORKSPACE, actor_id="a", decision_reason="import")
    claims = make_collection(ctx, "expenses")
    services.record_create_many(
        collection_id=claims.pk,
        rows=[
            NewRecord(ctx=ctx, title="Expense: MacBook for Priya", data={"amount": 2400}),
            NewRecord(ctx=ctx, title="Team lunch at the offsite", data={"amount": 180}),
        ],
    )
    assert len(missing_record_ids(WORKSPACE)) == 2
    result = ok(
        "batch_read",
        {
            "requests": [
                {"operation": "search_records", "text": "laptop reimbursement", "mode": "meaning"}
            ]
        },
    )
    page = result["items"][0]["result"]
    assert page["mode"] == "meaning"
    assert page["records"][0]["title"] == "Expense: MacBook for Priya"
    wait_until(lambda: not embeddings.catching_up(WORKSPACE), "the embeddings to be stored")
    assert missing_record_ids(WORKSPACE) == []
