"""records.query_bounds on the real backend: a statement past the limit stops, a cancelled call
runs no further statement, and the connection serves on."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import DatabaseError, connection, transaction

from records.models import Workspace
from records.query_bounds import CallCancelled, QueryBound, bounded_queries


def endless_sql() -> str:
    if connection.vendor == "postgresql":
        return "SELECT pg_sleep(30)"
    return (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 2000000000) "
        "SELECT count(*) FROM n"
    )


@pytest.mark.django_db
def test_a_statement_past_the_limit_is_stopped():
    bound = QueryBound(timeout_s=0.2)
    started = time.monotonic()
    with (
        pytest.raises(DatabaseError),
        bounded_queries(bound),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(endless_sql())
    assert bound.timed_out
    assert time.monotonic() - started < 5
    with connection.cursor() as cursor:  # the connection is fine afterwards
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.django_db
def test_a_cancelled_call_runs_no_further_statement_and_rolls_back():
    bound = QueryBound(timeout_s=10)
    before = Workspace.objects.count()
    with pytest.raises(CallCancelled), bounded_queries(bound), transaction.atomic():
        Workspace.objects.create(id="cancelled-ws")
        bound.cancel()
        Workspace.objects.create(id="never")
    assert Workspace.objects.count() == before


@pytest.mark.django_db
def test_cancel_from_another_thread_interrupts_a_running_statement():
    bound = QueryBound(timeout_s=60)
    timer = threading.Timer(0.3, bound.cancel)
    started = time.monotonic()
    timer.start()
    try:
        with (
            pytest.raises(CallCancelled),
            bounded_queries(bound),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(endless_sql())
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10


@pytest.mark.django_db
def test_outside_a_call_nothing_is_bounded():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
