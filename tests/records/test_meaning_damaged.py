"""Search by meaning over damaged embedding rows: the rows are skipped, logged once, and embedded
again by the catch-up; the rest of the workspace keeps answering by meaning."""

from __future__ import annotations

import logging
import threading

import pytest
from django.db import connection

from records import selectors, services
from records.meaning import embeddings, index, model
from records.meaning.embeddings import missing_record_ids
from records.models import RecordEmbedding
from records.services import WriteContext
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.polling import wait_until

MEANING_LOG = "records.meaning.embeddings"


def search(text: str) -> dict:
    return selectors.search_records(workspace_id=WORKSPACE, text=text, mode="meaning")


def titles(page: dict) -> list[str]:
    return [item["title"] for item in page["records"]]


def matched_by_meaning(page: dict) -> list[str]:
    return [item["title"] for item in page["records"] if item["matched"] in ("meaning", "both")]


def damage(record_id: str, how: str) -> None:
    """Write a row no embedding write produces, straight into the table."""
    damaged: dict[str, tuple[str, bytes | float | str]] = {
        "truncated": ("vector", bytes(RecordEmbedding.objects.get(pk=record_id).vector)[:100]),
        "infinite scale": ("scale", float("inf")),
        # SQLite keeps this text as it is in its REAL column; PostgreSQL reads it as its NaN.
        "NaN scale": ("scale", "NaN"),
        "huge scale": ("scale", 1e300),
    }
    column, value = damaged[how]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE records_recordembedding SET {column} = %s WHERE record_id = %s",
            [value, record_id],
        )


def readable(record_id: str) -> bool:
    row = RecordEmbedding.objects.get(record_id=record_id)
    scale = row.scale
    return (
        len(bytes(row.vector)) == model.STORED_DIMENSIONS
        and isinstance(scale, float)
        and (0 <= scale <= 1)
    )


def reports(caplog: pytest.LogCaptureFixture, record_id: str) -> int:
    return sum(
        record_id in r.getMessage()
        for r in caplog.records
        if r.name == MEANING_LOG and r.levelno == logging.WARNING
    )


def build(ctx: WriteContext) -> dict:
    notes = make_collection(ctx, "decisions", "Decisions we made and why")
    return {
        "oauth": make_record(
            ctx, notes, "OAuth design decision", body="Use PKCE for the web app login flow"
        ),
        "laptop": make_record(ctx, notes, "Expense: MacBook for Priya", amount=2400),
        "db": make_record(ctx, notes, "Database migration to PostgreSQL 16"),
        "offsite": make_record(ctx, notes, "Quarterly roadmap planning offsite"),
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["truncated", "infinite scale", "NaN scale", "huge scale"])
def test_a_damaged_row_is_skipped_logged_once_and_embedded_again_by_the_catch_up(caplog, how):
    services.workspace_ensure(WORKSPACE)
    records = build(WriteContext(workspace_id=WORKSPACE, actor_id="a", decision_reason="t"))
    laptop = records["laptop"].pk
    assert search("laptop reimbursement")["records"][0]["title"] == "Expense: MacBook for Priya"
    caplog.set_level(logging.WARNING, logger=MEANING_LOG)
    damage(laptop, how)
    assert not readable(laptop)

    # The process holding the workspace's vectors reloads them: the damaged row is left out,
    # the others still answer by meaning.
    page = search("what did we decide about sign-in")
    assert page["mode"] == "meaning"
    assert matched_by_meaning(page)[0] == "OAuth design decision"
    assert reports(caplog, laptop) == 1
    assert ("100 bytes" if how == "truncated" else "its scale is") in caplog.text

    # The catch-up the load started embeds the record again; then it is found by meaning.
    wait_until(lambda: not embeddings.catching_up(WORKSPACE), "the catch-up")
    assert readable(laptop) and missing_record_ids(WORKSPACE) == []
    page = search("laptop reimbursement")
    assert page["mode"] == "meaning"
    assert matched_by_meaning(page)[0] == "Expense: MacBook for Priya"
    search("what did we decide about sign-in")
    assert reports(caplog, laptop) == 1  # once per process and record, not per search


@pytest.mark.parametrize("how", ["truncated", "NaN scale"])
def test_a_process_started_after_the_damage_embeds_the_rows_again_before_it_searches(
    ctx, caplog, how
):
    records = build(ctx)
    damaged = [records["laptop"].pk, records["db"].pk]
    search("laptop")
    for record_id in damaged:
        damage(record_id, how)
    index.forget_cached()  # as a restart
    caplog.set_level(logging.WARNING, logger=MEANING_LOG)
    assert sorted(missing_record_ids(WORKSPACE)) == sorted(damaged)
    page = search("laptop reimbursement")
    assert page["mode"] == "meaning"
    assert matched_by_meaning(page)[0] == "Expense: MacBook for Priya"
    assert all(readable(record_id) for record_id in damaged)
    assert missing_record_ids(WORKSPACE) == []
    assert [reports(caplog, record_id) for record_id in damaged] == [1, 1]
    assert reports(caplog, records["oauth"].pk) == 0


def test_a_sound_row_is_neither_reported_nor_embedded_again(ctx, caplog):
    records = build(ctx)
    caplog.set_level(logging.WARNING, logger=MEANING_LOG)
    search("laptop")
    stored = {row.record_id: row.computed_at for row in RecordEmbedding.objects.all()}
    index.forget_cached()
    search("laptop")
    assert missing_record_ids(WORKSPACE) == []
    assert {row.record_id: row.computed_at for row in RecordEmbedding.objects.all()} == stored
    assert not any(r.name == MEANING_LOG for r in caplog.records)
    assert len(records) == len(stored)


@pytest.mark.sqlite
def test_a_vector_stored_as_text_is_unreadable_on_sqlite(ctx, caplog):
    records = build(ctx)
    search("laptop")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE records_recordembedding SET vector = %s WHERE record_id = %s",
            ["x" * model.STORED_DIMENSIONS, records["laptop"].pk],
        )
    caplog.set_level(logging.WARNING, logger=MEANING_LOG)
    assert missing_record_ids(WORKSPACE) == [records["laptop"].pk]
    assert "not bytes" in caplog.text


def test_at_exit_a_catch_up_stops_after_its_batch_and_is_waited_for(monkeypatch):
    """A process must not end while a catch-up is inside the model (onnxruntime then aborts
    it): the exit hook stops the catch-up between batches and waits for it."""
    monkeypatch.setattr(embeddings, "_stopping", threading.Event())
    monkeypatch.setattr(embeddings, "_threads", [])
    monkeypatch.setattr(embeddings, "CATCH_UP_BATCH", 1)
    monkeypatch.setattr(embeddings, "missing_record_ids", lambda workspace_id: ["a", "b", "c"])
    monkeypatch.setattr(embeddings, "_save_when_free", lambda rows: None)
    inside, release, embedded = threading.Event(), threading.Event(), []

    def compute_for(ids):
        embedded.append(ids)
        inside.set()
        release.wait(10)
        return []

    monkeypatch.setattr(embeddings, "compute_for", compute_for)
    embeddings.start_catch_up("exit-ws")
    assert inside.wait(10), "the catch-up never started"
    stopper = threading.Thread(target=embeddings.stop_catch_ups)
    stopper.start()
    wait_until(embeddings._stopping.is_set, "the exit hook to ask the catch-up to stop")
    assert stopper.is_alive()  # it waits for the batch inside the model
    release.set()
    stopper.join(10)
    assert not stopper.is_alive() and not embeddings.catching_up("exit-ws")
    assert embedded == [["a"]]  # the batch in hand finished; no new one began
