"""records.query_bounds on the real backend: a statement past the limit stops, a cancelled call
runs no further statement, and the connection serves on."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from django.db import DatabaseError, OperationalError, connection, transaction

from records.models import Workspace
from records.query_bounds import (
    CallCancelled,
    QueryBound,
    bounded_queries,
    cancel_tagged_statements,
)
from tests.polling import wait_until
from workflow.mcp.envelope import run_tool


def tagged_statement_running(tag: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s AND state = 'active' "
            "AND pid <> pg_backend_pid()",
            [tag],
        )
        return cursor.fetchone() is not None


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


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_connection_opened_during_a_call_is_bounded_too():
    """run_tool closes a kept connection past CONN_MAX_AGE inside the call; the connection
    opened in its place keeps the call's limits (SQLite's progress handler reads the bound
    from the thread anyway)."""
    bound = QueryBound(timeout_s=0.2)
    try:
        with pytest.raises(DatabaseError), bounded_queries(bound):
            connection.close()
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(10)")
    finally:
        connection.close()  # its session settings go with it


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_tagged_statement_is_stopped_from_another_connection():
    """What a cancel landing on another server process does: it finds the call's statement by
    its tag (application_name) and stops it; the call ends cancelled, not timed out.
    (SQLite cannot stop another process's statement.)"""
    tag = "anchor:test-digest:7"
    bound = QueryBound(timeout_s=60, tag=tag)
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            with bounded_queries(bound), transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(30)")
        except Exception as exc:
            outcome["raised"] = exc
        finally:
            connection.close()

    running = threading.Thread(target=call)
    started = time.monotonic()
    running.start()
    wait_until(lambda: tagged_statement_running(tag), "the tagged statement to be running")
    cancel_tagged_statements("anchor:another-call:7")  # a tag of no running call: a no-op
    assert running.is_alive()
    cancel_tagged_statements(tag)
    running.join(timeout=10)
    assert not running.is_alive() and time.monotonic() - started < 10
    assert isinstance(outcome.get("raised"), CallCancelled), outcome
    assert bound.cancelled.is_set() and not bound.timed_out


@pytest.mark.sqlite  # PostgreSQL's server-side timeout covers the whole statement
@pytest.mark.django_db
def test_rows_still_being_fetched_are_under_the_statements_clock():
    """SQLite returns the first row at once and scans on while the rest are fetched: that scan
    is bounded too (it once ran unbounded after a quick first row)."""
    # Unbounded, the scan for the last row takes about 30 s on this kind of machine.
    quick_first_row = (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 100000000) "
        "SELECT x FROM n WHERE x = 1 OR x = 100000000"
    )
    bound = QueryBound(timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(DatabaseError), bounded_queries(bound), connection.cursor() as cursor:
        cursor.execute(quick_first_row)
        cursor.fetchall()
    assert bound.timed_out
    assert time.monotonic() - started < 5


def sqlite_busy(tmp_path) -> sqlite3.OperationalError:
    """SQLite's own error for a write lock another connection held past the busy timeout."""
    path = tmp_path / "locked.db"
    holder, waiter = sqlite3.connect(path), sqlite3.connect(path, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        waiter.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        holder.close()
        waiter.close()
    raise AssertionError("the second writer was not refused")


@pytest.mark.django_db
def test_a_lock_wait_past_the_limit_is_storage_error_locked_not_query_timeout(tmp_path):
    busy = sqlite_busy(tmp_path)

    def locked_out(execute, sql, params, many, context):  # as SQLite gives up after its wait
        raise OperationalError(str(busy)) from busy

    # A limit every statement is past: only the kind of error can tell the two apart.
    bound = QueryBound(timeout_s=1e-9)
    with bounded_queries(bound), connection.execute_wrapper(locked_out):
        reply = run_tool(lambda: connection.cursor().execute("SELECT 1"))
    assert not bound.timed_out
    error = reply.get("error")
    assert error is not None, reply
    assert error["code"] == "STORAGE_ERROR" and error.get("details") == {"cause": "locked"}, error
    assert "Retry" in error["message"], error
