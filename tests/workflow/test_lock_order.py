"""Writes that lock several records take them in one order, by ID, and a write that waited on
another's lock past its limit is told to retry (STORAGE_ERROR, cause "locked"), not to narrow
a query (SQLite's side: tests/records/test_query_bounds.py).

On PostgreSQL, with threads on connections of their own. Two batches naming the same records in
opposite orders are held at their first lock by a third connection, then let go together:
taken item by item, each would get its first record and wait for the other's (a deadlock,
which PostgreSQL breaks by failing one); taken by ID, the second waits for the first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from records.errors import AnchorError
from tests.e2e.server import postgres_url
from tests.polling import lock_waiters, wait_until
from tests.workflow.helpers import ok, refused
from workflow import actions
from workflow.models import PreparedAction

pytestmark = [
    pytest.mark.postgres,  # row locks; SQLite runs one write transaction at a time
    pytest.mark.django_db(transaction=True),
]


def link(source: Any, target: Any, review_ids: list[str]) -> dict[str, Any]:
    return {
        "operation": "link_records",
        "arguments": {
            "source_id": source.pk,
            "relationship_type": "knows",
            "target_id": target.pk,
        },
        "review_ids": review_ids,
        "decision_reason": "lock order test",
    }


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except (AnchorError, DatabaseError) as exc:
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def apply_batch(action_id: str) -> dict[str, Any]:
    """The batch's writes, as its commit applies them once its checks have passed (a commit's
    counter locks would serialise these two batches before they reach a record)."""
    with transaction.atomic():
        return actions._apply(PreparedAction.objects.get(pk=action_id))


def waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        return lock_waiters(cursor)


def test_two_batches_naming_the_same_records_in_opposite_orders_never_deadlock(hiring):
    kirat, abhishek = hiring.kirat, hiring.abhishek
    named = [kirat, abhishek, hiring.backend, hiring.frontend]
    resolved = ok("batch_resolve_records", {"requests": [{"query": r.pk} for r in named]})
    ids = [item["result"]["resolution_id"] for item in resolved["items"]]
    forwards = ok(
        "prepare_batch_write",
        {"actions": [link(kirat, hiring.backend, ids), link(abhishek, hiring.backend, ids)]},
    )["action_id"]
    backwards = ok(
        "prepare_batch_write",
        {"actions": [link(abhishek, hiring.frontend, ids), link(kirat, hiring.frontend, ids)]},
    )["action_id"]
    holder = psycopg.connect(postgres_url(connection.settings_dict))
    try:
        holder.execute(
            "SELECT 1 FROM records_record WHERE id = ANY(%s) FOR UPDATE",
            [[kirat.pk, abhishek.pk]],
        )
        threads = [in_thread(partial(apply_batch, a)) for a in (forwards, backwards)]
        wait_until(lambda: waiting_on_locks() >= 2, "both batches to wait on a record")
    finally:
        holder.rollback()
        holder.close()
    for thread, _ in threads:
        thread.join(timeout=60)
    outcomes = [outcome[0] for _, outcome in threads]
    assert all(isinstance(o, dict) and len(o["items"]) == 2 for o in outcomes), outcomes


def test_a_commit_kept_waiting_on_a_lock_is_told_to_retry(hiring, settings):
    review = ok("resolve_record", {"query": hiring.kirat.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "update_record",
            "arguments": {
                "record_id": hiring.kirat.pk,
                "changes": {"stage": "offer"},
                "expected_version": hiring.kirat.version,
            },
            "review_ids": [review["resolution_id"]],
            "decision_reason": "lock wait test",
        },
    )
    settings.ANCHOR_QUERY_TIMEOUT_S = 0.5  # the lock wait gives up at 0.45 s
    holder = psycopg.connect(postgres_url(connection.settings_dict))
    try:
        holder.execute("SELECT 1 FROM records_record WHERE id = %s FOR UPDATE", [hiring.kirat.pk])
        error = refused("commit_write", {"action_id": prepared["action_id"]}, "STORAGE_ERROR")
    finally:
        holder.rollback()
        holder.close()
    assert error["details"] == {"cause": "locked"}, error
    assert "Retry" in error["message"] and "lock" in error["message"], error
    assert "Narrow" not in error["message"], error
    settings.ANCHOR_QUERY_TIMEOUT_S = 10
    # Nothing was written, and the same action commits once the lock is gone.
    assert ok("commit_write", {"action_id": prepared["action_id"]})["status"] == "committed"
