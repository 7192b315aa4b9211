"""The benchmark's parts that decide what a row compares: the long history it runs on, the
plain-scan references of the search rows, and where a miss's profile is printed.

A reference is only worth printing if it asks the same question: the scans here must find what
search_records finds on the same records. Nothing is timed.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from django.db import connection

from anchor_site.devtools.benchmarks import data, profile
from anchor_site.devtools.benchmarks.measure import Row, Sizes, table
from anchor_site.devtools.benchmarks.names import resolution
from anchor_site.devtools.benchmarks.store import graph, search
from records import services
from records.models import AuditEvent
from records.selectors import search_records
from tests.polling import wait_until


def _fetch_ids(sql_and_params: tuple[str, list]) -> list[str]:
    return [row[0] for row in search._fetch(*sql_and_params)]


@pytest.mark.django_db(transaction=True)
def test_the_full_text_scan_finds_the_records_the_index_finds():
    ctx = data.context()
    notes = data.collection(ctx, "notes")
    kept = [
        services.record_create(ctx=ctx, collection_id=notes.pk, title="Kirat lunch", data={}),
        services.record_create(
            ctx=ctx, collection_id=notes.pk, title="Plan", data={"notes": "call KIRAT today"}
        ),
        # The index matches a word's start (a prefix query), not the middle of one.
        services.record_create(ctx=ctx, collection_id=notes.pk, title="Kiratsu", data={}),
    ]
    for title, values in (("Akirat", {}), ("Other", {"notes": "nothing here"})):
        services.record_create(ctx=ctx, collection_id=notes.pk, title=title, data=values)

    found = search_records(workspace_id=data.WORKSPACE, text="kirat", limit=20)
    scanned = _fetch_ids(search.scan_sql("kirat"))

    assert {r["record_id"] for r in found["records"]} == {r.pk for r in kept}
    assert set(scanned) == {r.pk for r in kept}
    assert scanned[-1] == kept[1].pk  # title matches first, as the index ranks them


@pytest.mark.django_db(transaction=True)
def test_the_plain_sorted_statement_returns_the_page_search_records_returns():
    ctx = data.context()
    tasks = data.collection(ctx, "tasks")
    for index, (status, amount) in enumerate(
        [("open", 5), ("done", 900), ("open", 70), ("open", 70), ("open", 1000), ("blocked", 3)]
    ):
        services.record_create(
            ctx=ctx,
            collection_id=tasks.pk,
            title=f"Task {index}",
            data={"status": status, "amount": amount},
        )
    page = search_records(
        workspace_id=data.WORKSPACE,
        collection_id=tasks.pk,
        where=[{"field": ["status"], "op": "eq", "value": "open"}],
        order_by={"field": ["amount"], "type": "number", "direction": "desc"},
        limit=20,
    )

    plain = _fetch_ids(search.sorted_sql(tasks.pk))

    assert plain == [r["record_id"] for r in page["records"]]
    assert len(plain) == 4


@pytest.mark.django_db(transaction=True)
def test_the_long_history_is_filled_up_to_the_events_asked_for_and_no_further():
    ctx = data.context()
    sizes = Sizes(events=60, collections=3)
    data.collection(ctx, "already here")  # an event the build counts
    before = AuditEvent.objects.filter(workspace_id=data.WORKSPACE).count()

    first = data.history(sizes, ctx)
    again = data.history(sizes, ctx)

    assert data.events() == 60
    assert f"{60 - before - 3:,} added" in first.what  # after the three task collections
    assert "0 added" in again.what
    assert len(data.task_collections(ctx, 3)) == 3  # the same three, not new ones


def test_a_profile_is_printed_under_the_first_missed_row_naming_the_others():
    rows = [
        Row("passed, 1", 1.0, "ms", passed=True),
        Row("missed first, 2", 2.0, "ms", passed=False),
        Row("missed second, 3", 3.0, "ms", passed=False),
    ]

    profile.attach(rows, ["  py-spy: 10 samples"])
    profile.attach(rows[:1], ["  never shown: nothing missed"])

    assert rows[0].profile == []
    assert rows[1].profile[0] == "  profile of the re-run phase (also covers: missed second)"
    assert rows[1].profile[1:] == ["  py-spy: 10 samples"]
    assert rows[2].profile == []


@pytest.mark.django_db(transaction=True)
def test_a_missed_aggregate_row_prints_the_calls_statements_plans_and_python(monkeypatch):
    """Every graph aggregate row, held to a target nothing meets, prints under it the SQL its
    call ran with the backend's plan and real timings, and where the Python time went."""
    ctx = data.context()
    ledger_id = data.collection(ctx, "bench ledger").pk
    data.bulk_insert(ledger_id, iter(graph.ledger(40)))
    monkeypatch.setattr(graph, "AGGREGATE_TARGET_MS", 0)
    sizes = Sizes(reference_repeat=1, profile=1)

    rows = graph.aggregate_rows(sizes, ledger_id) + graph.linked_rows(sizes, ctx, ledger_id, 40)

    postgres = connection.vendor == "postgresql"
    for row in rows:
        assert row.passed is False
        text = "\n".join(row.profile)
        assert row.profile[0].startswith("  profile of the missed call"), text
        assert "SQL statement(s) at the driver" in row.profile[1] and "in Python" in text
        assert "  statement 1, " in text and "SELECT" in text
        if postgres:
            assert "plan, EXPLAIN (ANALYZE, BUFFERS):" in text and "actual time=" in text
        else:
            assert "plan, EXPLAIN QUERY PLAN; run alone: " in text and "SCAN" in text
        assert "top functions by cumulative time" in text
        assert "records/selectors/aggregation.py" in text, text
    whole_ledger = rows[-1].profile
    assert "whole ledger" in rows[-1].what
    statements = int(whole_ledger[1].split(" in ")[1].split()[0])
    assert statements >= 3  # the matched records, the links, the groups
    assert statements == sum(line.startswith("  statement ") for line in whole_ledger)
    printed = "\n".join(table(connection.vendor, [rows[1].as_dict()]))
    assert "\n    profile of the missed call" in printed

    quiet = graph.aggregate_rows(replace(sizes, profile=0), ledger_id)  # --no-profile, --quick
    assert all(row.passed is False and row.profile == [] for row in quiet)


@pytest.mark.django_db(transaction=True)
def test_a_missed_name_list_patch_prints_where_its_python_time_went(monkeypatch):
    ctx = data.context()
    people = data.collection(ctx, "bench people").pk
    data.bulk_insert(people, data.people([f"Person {n}" for n in range(30)]))
    monkeypatch.setattr(resolution, "PATCH_TARGET_MS", 0)
    row = resolution.patch_row(Sizes(profile=1), data.WORKSPACE, people, 30)
    text = "\n".join(row.profile)
    assert row.passed is False and "0 SQL statement(s)" in text, text
    assert "top functions by cumulative time" in text and "workflow/names/view.py" in text
    quiet = resolution.patch_row(Sizes(profile=0), data.WORKSPACE, people, 30)
    assert quiet.passed is False and quiet.profile == []


def _runs(pid: int, code: str) -> bool:
    return code.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()


def test_only_the_mcp_serve_children_of_this_process_are_found_for_profiling():
    wait = "import sys; sys.stdin.read()"
    server = subprocess.Popen([sys.executable, "-c", wait, "mcp_serve"], stdin=subprocess.PIPE)
    other = subprocess.Popen([sys.executable, "-c", wait], stdin=subprocess.PIPE)
    try:
        # A child shows the test's own command line until it has exec'd its own.
        for child in (server, other):
            wait_until(partial(_runs, child.pid, wait), f"process {child.pid} to run its own")
        found = profile.mcp_serve_children()
    finally:
        for child in (server, other):
            assert child.stdin is not None
            child.stdin.close()
            child.wait()

    assert server.pid in found
    assert other.pid not in found
