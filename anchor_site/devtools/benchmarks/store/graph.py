"""Traversal and totals at scale: a ledger collection of up to 100,000 generated records with a
hub of 1,000 links, then a 3-hop traverse from the hub and one aggregate row per shape: count
by a field, sum + avg by month bucket, totals with no group_by, a where filter, and grouping by
linked record (a 5,000-record team collection linked into the ledger, and the whole ledger).

References, timed in the same run on the same data:
- traversal: the same breadth-first walk done the way a client would with get_record_context,
  one neighbour query per node and direction (what traverse's one-query-per-level replaces);
- aggregates: the plainest SQL that computes the same answer on this backend (json_extract or
  ->>, one GROUP BY, no skip accounting, no canonical keys), the floor a grouping over a JSON
  field cannot go below. Each row's note says whether the reference got the same answer.

A missed row prints the call's SQL statements, plans and Python time under it (profile.py).
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, transaction

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from anchor_site.devtools.benchmarks.profile import explained
from records.ids import new_id
from records.models import Record, Relationship
from records.selectors import aggregate, traverse

AREA = "graph"
MAX_RECORDS = 100_000  # the workspace size; --records lowers it, never raises it
HUB_LINKS = 1_000
DEPTH = 3
MAX_NODES = 200  # traverse's own ceiling
TRAVERSAL_TARGET_MS = 50
AGGREGATE_TARGET_MS = 100  # every aggregate shape, at 100,000 records, both backends
TEAM_SIZE = 5_000  # the collection the linked grouping timed out on
METRICS = [{"op": "sum", "field": ["amount"]}, {"op": "avg", "field": ["amount"]}]


def ledger(count: int, seed: int = 21) -> list[data.BulkRecord]:
    """Entries with an ISO `due` date over two years and an `amount` that is usually a number:
    about 2% are text like "95 LPA", 1% lack it; 1% have no due date, 1% a non-date one."""
    rng = random.Random(seed)
    first = datetime(2023, 1, 1)
    rows = []
    for index in range(count):
        fields: dict[str, Any] = {"n": index, "status": data.STATUSES[index % 5]}
        roll = rng.random()
        if roll < 0.02:
            fields["amount"] = f"{rng.randrange(5, 200)} LPA"
        elif roll >= 0.03:
            fields["amount"] = rng.randrange(100_000) if roll < 0.8 else rng.randrange(10_000) / 4
        roll = rng.random()
        if roll < 0.01:
            fields["due"] = "soon"
        elif roll >= 0.02:
            fields["due"] = (first + timedelta(days=rng.randrange(730))).date().isoformat()
        title = "Graph hub" if index == 0 else f"Ledger entry {index}"
        rows.append(data.BulkRecord(title, fields))
    return rows


def generate(sizes: Sizes, ctx) -> tuple[str, str, int, Row]:
    """The ledger collection and its links; returns (collection ID, hub ID, records, row)."""
    count = max(2, min(sizes.records, MAX_RECORDS))
    collection_id = data.collection(ctx, "bench ledger").pk
    started = time.perf_counter()
    data.bulk_insert(collection_id, iter(ledger(count)))
    ids = list(
        Record.objects.filter(collection_id=collection_id)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )
    made = links(ids)
    insert_links(made)
    elapsed = time.perf_counter() - started
    row = Row(
        AREA,
        f"generate {count:,} ledger records + {len(made):,} links (bulk SQL)",
        elapsed,
        "s",
        note=f"{count / elapsed:,.0f} records/s" if elapsed else "",
    )
    return collection_id, ids[0], count, row


def links(ids: list[str]) -> list[tuple[str, str, str]]:
    """The hub links to HUB_LINKS entries; each of those depends on two more, and a tenth of
    the ledger has one random related_to link: (source, type, target), unique."""
    rng = random.Random(7)
    hub, rest = ids[0], ids[1:]
    found: dict[tuple[str, str, str], None] = {}
    for target in rest[:HUB_LINKS]:
        found[(hub, "includes", target)] = None
    for source in rest[:HUB_LINKS]:
        for target in rng.sample(rest, min(2, len(rest))):
            if target != source:
                found[(source, "depends_on", target)] = None
    for _ in range(len(ids) // 10):
        source, target = rng.sample(rest, 2) if len(rest) > 1 else (hub, rest[0])
        found[(source, "related_to", target)] = None
    return list(found)


def insert_links(links: list[tuple[str, str, str]]) -> None:
    start = datetime(2024, 6, 1, tzinfo=UTC)
    rows = [
        (
            new_id(),
            data.WORKSPACE,
            source,
            kind,
            target,
            data.ACTOR,
            connection.ops.adapt_datetimefield_value(start + timedelta(seconds=index)),
        )
        for index, (source, kind, target) in enumerate(links)
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        for offset in range(0, len(rows), data.CHUNK):
            cursor.executemany(
                "INSERT INTO records_relationship (id, workspace_id, source_id, "
                "relationship_type, target_id, created_by, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                rows[offset : offset + data.CHUNK],
            )
        if connection.vendor == "postgresql":
            # What autovacuum's analyze does soon after a bulk insert on a live server (the
            # bulk record loader does the same): without it the planner takes the links
            # table for a dozen rows and looks up 35,000 link pairs one record at a time.
            cursor.execute("ANALYZE records_relationship")


# --- the references ----------------------------------------------------------------------------


def walk_per_node(start_id: str) -> tuple[set[str], int]:
    """traverse's walk, one get_record_context-style query per node and direction; returns
    (reached record IDs, queries)."""
    depths = {start_id: 0}
    frontier = [start_id]
    queries = 0
    for depth in range(1, DEPTH + 1):
        following = []
        for record_id in frontier:
            for own, other in (("source", "target"), ("target", "source")):
                rows = (
                    Relationship.objects.filter(
                        workspace_id=data.WORKSPACE, **{f"{own}_id": record_id}
                    )
                    .order_by("created_at", "id")
                    .values(
                        "id",
                        "relationship_type",
                        f"{other}_id",
                        f"{other}__title",
                        f"{other}__collection_id",
                        f"{other}__archived_at",
                    )
                )
                queries += 1
                for row in rows:
                    found = row[f"{other}_id"]
                    if found not in depths and len(depths) - 1 < MAX_NODES:
                        depths[found] = depth
                        following.append(found)
        frontier = following
        if not frontier:
            break
    return set(depths) - {start_id}, queries


# --- the aggregate references: the plainest SQL for the same answer ----------------------------


def _sqlite() -> bool:
    return connection.vendor == "sqlite"


def _text(key: str) -> str:
    return f"json_extract(r.data, '$.{key}')" if _sqlite() else f"(r.data ->> '{key}')"


def _number(key: str) -> str:
    if _sqlite():
        return (
            f"CASE WHEN json_type(r.data, '$.{key}') IN ('integer', 'real') "
            f"THEN json_extract(r.data, '$.{key}') END"
        )
    return (
        f"CASE WHEN jsonb_typeof(r.data -> '{key}') = 'number' "
        f"THEN (r.data ->> '{key}')::numeric END"
    )


MATCHED = "r.workspace_id = %s AND r.archived_at IS NULL AND r.collection_id = %s"


def plain(sql: str, collection_id: str, copies: int = 1) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, (data.WORKSPACE, collection_id) * copies)
        return cursor.fetchall()


def plain_by_field(collection_id: str, where: str = "") -> dict[Any, int]:
    """Counts by status, the status read as text (no canonical JSON keys)."""
    rows = plain(
        f"SELECT {_text('status')}, COUNT(*) FROM records_record r WHERE {MATCHED}{where} "
        "GROUP BY 1",
        collection_id,
    )
    return dict(rows)


def plain_where() -> str:
    return f" AND ({_number('amount')}) >= 50000"


def plain_by_month(collection_id: str) -> dict[Any, tuple[Any, Any]]:
    """Sum and avg of the numeric amounts by the due date's first 7 characters."""
    amount = _number("amount")
    rows = plain(
        f"SELECT substr({_text('due')}, 1, 7), SUM({amount}), AVG({amount}) "
        f"FROM records_record r WHERE {MATCHED} GROUP BY 1",
        collection_id,
    )
    return {key: (total, average) for key, total, average in rows}


def plain_totals(collection_id: str) -> tuple[Any, ...]:
    amount = _number("amount")
    return plain(
        f"SELECT COUNT(*), SUM({amount}), AVG({amount}) FROM records_record r WHERE {MATCHED}",
        collection_id,
    )[0]


def plain_by_linked(collection_id: str) -> dict[Any, int]:
    """Each matched record once per record linked to it either way, or once with NULL."""
    rows = plain(
        "SELECT linked, COUNT(*) FROM ("
        "SELECT r.id, rel.target_id AS linked FROM records_record r "
        f"JOIN records_relationship rel ON rel.source_id = r.id WHERE {MATCHED} "
        "UNION SELECT r.id, rel.source_id FROM records_record r "
        f"JOIN records_relationship rel ON rel.target_id = r.id WHERE {MATCHED} "
        f"UNION SELECT r.id, NULL FROM records_record r WHERE {MATCHED} "
        "AND NOT EXISTS (SELECT 1 FROM records_relationship x WHERE x.source_id = r.id) "
        "AND NOT EXISTS (SELECT 1 FROM records_relationship x WHERE x.target_id = r.id)"
        ") pairs GROUP BY linked",
        collection_id,
        copies=3,
    )
    return dict(rows)


def _same_counts(groups: list[dict[str, Any]], group_count: int, expected: dict) -> bool:
    """The groups returned (the largest, at most the limit) count what the reference does."""
    got = {group["key"]: group["count"] for group in groups}
    return group_count == len(expected) and all(expected.get(k) == n for k, n in got.items())


def _same_totals(groups: list[dict[str, Any]], expected: dict[Any, tuple[Any, Any]]) -> bool:
    """The dated months agree (the reference keeps "soon" as a month of its own and has no
    missing/not_a_date split)."""
    dated = {g["key"]: g for g in groups if g["key"] is not None}
    months = {m for m in expected if isinstance(m, str) and m[:4].isdigit()}
    if set(dated) != months:
        return False
    for month, group in dated.items():
        total, average = expected[month]
        got_sum, got_avg = group["metrics"][0]["value"], group["metrics"][1]["value"]
        if not _near(got_sum, total) or not _near(got_avg, average):
            return False
    return True


def _near(got: Any, expected: Any) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    return abs(float(got) - float(expected)) <= 1e-6 * max(1.0, abs(float(expected)))


def team(ctx, ledger_id: str, count: int) -> str:
    """A team collection of up to TEAM_SIZE people, nine in ten working on a ledger entry."""
    size = max(10, min(TEAM_SIZE, count // 20))
    team_id = data.collection(ctx, "bench linked team").pk
    data.bulk_insert(
        team_id,
        iter(data.BulkRecord(f"Member {i}", {"status": data.STATUSES[i % 5]}) for i in range(size)),
    )
    members = list(Record.objects.filter(collection_id=team_id).values_list("id", flat=True))
    entries = list(
        Record.objects.filter(collection_id=ledger_id).values_list("id", flat=True)[:2000]
    )
    rng = random.Random(3)
    insert_links([(m, "works_on", rng.choice(entries)) for m in members[: size * 9 // 10]])
    return team_id


def _row(what: str, sizes: Sizes, measured: Any, reference: Any, same: bool, note: str = "") -> Row:
    times = max(3, sizes.reference_repeat * 2)
    ours = repeat(measured, times)
    floor = repeat(reference, times)
    row = Row(
        AREA,
        what,
        ours.median_ms,
        "ms",
        p95=ours.p95_ms,
        target=f"< {AGGREGATE_TARGET_MS} ms",
        passed=ours.median_ms < AGGREGATE_TARGET_MS,
        reference=floor.median_ms,
        reference_what="the plainest SQL for the same answer",
        note=f"{note}same answer as reference: {'yes' if same else 'NO'}",
    )
    return explained(row, sizes, measured)


def aggregate_rows(sizes: Sizes, ledger_id: str) -> list[Row]:
    """One row per aggregate shape over the whole ledger."""

    def run(**kwargs: Any) -> dict[str, Any]:
        return aggregate(workspace_id=data.WORKSPACE, collection_id=ledger_id, **kwargs)

    by_field = {"group_by": {"field": ["status"]}}
    by_month = {"group_by": {"field": ["due"], "bucket": "month"}, "metrics": METRICS, "limit": 100}
    where = {
        "where": [{"field": ["amount"], "op": "gte", "value": 50000}],
        "group_by": {"field": ["status"]},
    }
    rows = []
    result = run(**by_field)
    rows.append(
        _row(
            f"aggregate count grouped by a field, {result['matched']:,} records",
            sizes,
            lambda: run(**by_field),
            lambda: plain_by_field(ledger_id),
            _same_counts(result["groups"], result["group_count"], plain_by_field(ledger_id)),
        )
    )
    result = run(**by_month)
    skipped = sum(g["metrics"][0]["skipped_non_numeric"] for g in result["groups"])
    rows.append(
        _row(
            f"aggregate sum + avg grouped by month, {result['matched']:,} records",
            sizes,
            lambda: run(**by_month),
            lambda: plain_by_month(ledger_id),
            _same_totals(result["groups"], plain_by_month(ledger_id)),
            f"{result['group_count']} groups, {skipped:,} non-numeric skipped; ",
        )
    )
    result = run(metrics=METRICS)
    count, total, average = plain_totals(ledger_id)
    totals = result["totals"]
    rows.append(
        _row(
            f"aggregate sum + avg, no group_by, {result['matched']:,} records",
            sizes,
            lambda: run(metrics=METRICS),
            lambda: plain_totals(ledger_id),
            totals["count"] == count
            and _near(totals["metrics"][0]["value"], total)
            and _near(totals["metrics"][1]["value"], average),
        )
    )
    result = run(**where)
    reference = plain_by_field(ledger_id, plain_where())
    rows.append(
        _row(
            f"aggregate count by a field with a where filter, {result['matched']:,} of the "
            "ledger's records",
            sizes,
            lambda: run(**where),
            lambda: plain_by_field(ledger_id, plain_where()),
            _same_counts(result["groups"], result["group_count"], reference),
        )
    )
    return rows


def linked_rows(sizes: Sizes, ctx, ledger_id: str, count: int) -> list[Row]:
    """group_by linked over a small collection among many links, and over the whole ledger."""
    team_id = team(ctx, ledger_id, count)
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    links = Relationship.objects.filter(workspace_id=data.WORKSPACE).count()
    rows = []
    for collection_id, what in ((team_id, "team collection"), (ledger_id, "whole ledger")):

        def grouped(collection_id: str = collection_id) -> Any:
            return aggregate(
                workspace_id=data.WORKSPACE, collection_id=collection_id, group_by={"linked": {}}
            )

        result = grouped()
        rows.append(
            _row(
                f"aggregate grouped by linked record, {what} of {result['matched']:,} records "
                f"({total:,} in the workspace, {links:,} links)",
                sizes,
                grouped,
                lambda collection_id=collection_id: plain_by_linked(collection_id),
                _same_counts(
                    result["groups"], result["group_count"], plain_by_linked(collection_id)
                ),
                f"{result['group_count']:,} groups; ",
            )
        )
    return rows


# --- the rows ----------------------------------------------------------------------------------


def run(sizes: Sizes, ctx) -> list[Row]:
    collection_id, hub_id, count, generated = generate(sizes, ctx)
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    hub_links = min(HUB_LINKS, count - 1)

    def walk():
        return traverse(
            workspace_id=data.WORKSPACE,
            start_record_id=hub_id,
            max_depth=DEPTH,
            direction="both",
            max_nodes=MAX_NODES,
        )

    walked = walk()
    reached = {node["record_id"] for node in walked["records"]}
    by_node, queries = walk_per_node(hub_id)
    walks = repeat(walk, sizes.repeat)
    per_node = repeat(lambda: walk_per_node(hub_id), max(3, sizes.reference_repeat))
    deepest = max((node["depth"] for node in walked["records"]), default=0)
    # Profiled before the team's links are added, on the data it was timed on.
    traversal = explained(
        Row(
            AREA,
            f"{DEPTH}-hop traversal from a hub of {hub_links:,} links, max_nodes {MAX_NODES}, "
            f"{total:,} records",
            walks.median_ms,
            "ms",
            p95=walks.p95_ms,
            target=f"< {TRAVERSAL_TARGET_MS} ms",
            passed=walks.median_ms < TRAVERSAL_TARGET_MS,
            reference=per_node.median_ms,
            reference_what=f"same walk, one neighbour query per node and direction "
            f"({queries} queries)",
            note=f"{walked['reached_count']} reached, deepest {deepest}, "
            f"truncated={walked['truncated']}, "
            f"same records as reference: {'yes' if reached == by_node else 'NO'}",
        ),
        sizes,
        walk,
    )
    totals = aggregate_rows(sizes, collection_id)
    linked = linked_rows(sizes, ctx, collection_id, count)
    return [
        generated,
        traversal,
        *totals,
        *linked,
    ]
