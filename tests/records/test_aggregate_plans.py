"""aggregate reads links from the smaller side, and sums per key without sorting every record.

A few matched records in a workspace with many links must not cost what the workspace's links
cost: their links are looked up by source and by target (relationship_unique, relationship_in),
and the grouping is read from those alone. Many matched records beside few links must not cost
two index probes per record: the workspace's links are read once instead. The plans are the
backends' own EXPLAIN of the statement aggregate runs; on PostgreSQL sequential scans are
priced out, so a plan that still reads the table whole (or by workspace) has no indexed path
to take.

On PostgreSQL a key read out of data looks like a group per record to the planner (r.data's
statistics: every record's data differs); with sums per key it would sort every record, its
data with it, past work_mem to group them. Behind the per-record layer's fence it hashes the
few keys instead.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from anchor_site.devtools.benchmarks import data
from records import selectors, services
from tests.conftest import WORKSPACE, link, make_collection, make_record


@pytest.fixture
def team_in_a_linked_workspace(ctx):
    """Three people, two linked to a project, beside a ledger with many links of its own."""
    ledger = make_collection(ctx, "ledger")
    entries = [make_record(ctx, ledger, f"Entry {i}") for i in range(12)]
    for i, source in enumerate(entries):
        for target in entries[i + 1 : i + 4]:
            link(ctx, source, "related_to", target)
    team = make_collection(ctx, "team")
    people = [make_record(ctx, team, name) for name in ("Asha", "Ben", "Chen")]
    link(ctx, people[0], "works_on", entries[0])
    link(ctx, entries[0], "staffed_by", people[1])
    return team


def grouped_statement(team) -> tuple[dict, str]:
    with CaptureQueriesContext(connection) as queries:
        result = selectors.aggregate(
            workspace_id=WORKSPACE, collection_id=team.pk, group_by={"linked": {}}
        )
    statement = next(q["sql"] for q in queries.captured_queries if "GROUP BY" in q["sql"])
    return result, statement


def plan(sql: str) -> list[str]:
    """The plan of a statement already run (its parameters inlined by the capture)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
            return [row[-1] for row in cursor.fetchall()]
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}")
        return [row[0] for row in cursor.fetchall()]


def relationship_reads(lines: list[str]) -> list[str]:
    if connection.vendor == "sqlite":
        return [line for line in lines if " rel " in f"{line} " or "rel USING" in line]
    return [line for line in lines if "records_relationship" in line]


def test_linked_groups_read_links_by_record_not_by_workspace(team_in_a_linked_workspace):
    result, statement = grouped_statement(team_in_a_linked_workspace)
    groups = {g.get("title"): g["count"] for g in result["groups"]}
    assert groups == {"Entry 0": 2, None: 1}
    lines = plan(statement)
    # A join to a subquery has no index: without statistics SQLite scans it once per record.
    assert not [line for line in lines if line.startswith("SCAN") and "LEFT-JOIN" in line]
    reads = relationship_reads(lines)
    assert reads, "the plan reads the relationships somewhere"
    for line in reads:
        assert "workspace" not in line, f"every link of the workspace read: {line}"
        if connection.vendor == "sqlite":
            assert "source_id=" in line or "target_id=" in line, f"links scanned: {line}"
        else:
            assert "Seq Scan" not in line, f"links scanned: {line}"


def test_linked_titles_are_looked_up_for_the_groups_returned(team_in_a_linked_workspace):
    """The linked record's title comes from one lookup per group returned, not a join of the
    records table to every matched record's links."""
    _, statement = grouped_statement(team_in_a_linked_workspace)
    inner = statement[: statement.rindex("LIMIT")]
    assert "records_record linked" not in inner and "t.id = g.group_key" in statement


def test_links_few_beside_the_matched_records_are_read_once_not_per_record(ctx):
    """Twelve records and two links: probing both link indexes for every record costs more
    than reading the workspace's links once, so the plan reads them by workspace."""
    ledger = make_collection(ctx, "ledger")
    entries = [make_record(ctx, ledger, f"Entry {i}") for i in range(12)]
    link(ctx, entries[0], "related_to", entries[1])
    link(ctx, entries[2], "related_to", entries[1])
    result, statement = grouped_statement(ledger)
    counts = {g.get("title"): g["count"] for g in result["groups"]}
    assert counts == {"Entry 1": 2, "Entry 0": 1, "Entry 2": 1, None: 9}
    reads = relationship_reads(plan(statement))
    assert reads, "the plan reads the relationships somewhere"
    text = "\n".join(plan(statement))
    for column in ("source_id", "target_id"):
        per_record = f"{column}=?" if connection.vendor == "sqlite" else f"({column})::text = "
        assert per_record not in text, f"links looked up per record:\n{text}"


@pytest.mark.postgres
def test_sums_by_a_field_hash_the_keys_rather_than_sort_every_record(db):
    """1,000 records in 256 kB of work_mem stand for the ledger's 100,000 in the default 4 MB
    (sum + avg by month: 180 ms sorted on disk, 105 ms hashed)."""
    ledger = data.collection(data.context(), "ledger")
    statuses = ["open", "done", "blocked"]
    fields = [{"n": i, "status": statuses[i % 3], "amount": i} for i in range(1000)]
    data.bulk_insert(ledger.pk, (data.BulkRecord(f"Entry {i}", f) for i, f in enumerate(fields)))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE records_record")  # rolled back with the test
    with CaptureQueriesContext(connection) as queries:
        result = selectors.aggregate(
            workspace_id=data.WORKSPACE,
            collection_id=ledger.pk,
            group_by={"field": ["status"]},
            metrics=[{"op": "sum", "field": ["amount"]}],
        )
    sums = {g["key"]: g["metrics"][0]["value"] for g in result["groups"]}
    assert sums == {s: sum(i for i in range(1000) if statuses[i % 3] == s) for s in statuses}
    statement = queries.captured_queries[-1]["sql"]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL work_mem = '256kB'")
        cursor.execute("SET LOCAL hash_mem_multiplier = 1")
        cursor.execute(f"EXPLAIN {statement}")
        lines = [row[0] for row in cursor.fetchall()]
    every_record_sorted = [line for line in lines if "Sort Key:" in line and "r.data" in line]
    assert not every_record_sorted, "\n".join(lines)


def records_read_per_pair(lines: list[str]) -> bool:
    """Whether the plan reads each pair's own record by primary key, the pairs outer."""
    if connection.vendor == "sqlite":
        pairs = [i for i, line in enumerate(lines) if line.startswith("SCAN l")]
        by_key = [
            i
            for i, line in enumerate(lines)
            if line.startswith("SEARCH r USING") and "(id=?)" in line
        ]
        return bool(pairs and by_key and pairs[0] < by_key[0])
    # The record scan is parameterised by its pair (on a table this small the planner may
    # probe another index and filter by id: the lookup is still one per pair).
    joined = [line for line in lines if line.startswith(("Join Filter", "Hash Cond", "Merge Cond"))]
    per_pair = [line for line in lines if "(id)::text = (r" in line]
    return not [line for line in joined if "r.id" in line] and bool(per_pair)


@pytest.mark.parametrize("few_links", [True, False])
def test_linked_pairs_drive_the_record_lookups_without_statistics(ctx, few_links):
    """Right after a restore the planner has no statistics: it takes the matched records for
    one row and the pairs for two, and would scan every pair for every record (50,000
    records: past the query timeout). The pairs drive and look their records up by key,
    whichever way round the links are read."""
    if connection.vendor == "postgresql":
        # Statistics taken while the tables were (nearly) empty, as a long test run leaves
        # them: the estimates that sent the old plan scanning every link for every record.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE records_record, records_relationship")
    ledger = make_collection(ctx, "ledger")
    entries = [make_record(ctx, ledger, f"Entry {i}") for i in range(12)]
    link(ctx, entries[0], "related_to", entries[1])
    if not few_links:
        for i, source in enumerate(entries):
            for target in entries[i + 2 : i + 5]:
                link(ctx, source, "related_to", target)
    result, statement = grouped_statement(ledger)
    assert sum(g["count"] for g in result["groups"] if g.get("not_linked")) == (
        10 if few_links else 0
    )
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {statement}")
            lines = [row[-1] for row in cursor.fetchall()]
        else:
            cursor.execute(f"EXPLAIN {statement}")
            lines = [row[0].strip() for row in cursor.fetchall()]
    assert records_read_per_pair(lines), "\n".join(lines)


def test_a_whole_collection_grouped_by_link_is_counted_from_its_kept_count(ctx):
    """The matched total of a whole collection is its kept active count, not a scan of its
    records; a narrower match is counted."""
    ledger = make_collection(ctx, "ledger")
    entries = [make_record(ctx, ledger, f"Entry {i}", amount=i) for i in range(4)]
    link(ctx, entries[0], "related_to", entries[1])
    services.record_archive(ctx=ctx, record_id=entries[3].pk, expected_version=1)
    for where, matched, scans in (
        (None, 3, False),
        ([{"field": ["amount"], "op": "gte", "value": 1}], 2, True),
    ):
        with CaptureQueriesContext(connection) as queries:
            result = selectors.aggregate(
                workspace_id=WORKSPACE,
                collection_id=ledger.pk,
                where=where,
                group_by={"linked": {}},
            )
        assert result["matched"] == matched
        counted = [
            q for q in queries.captured_queries if "COUNT(*) FROM records_record" in q["sql"]
        ]
        assert bool(counted) == scans
