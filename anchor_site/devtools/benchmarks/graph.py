"""Traversal and totals at scale: a ledger collection of up to 100,000 generated records with a
hub of 1,000 links, then a 3-hop traverse from the hub, an aggregate grouped by month, and
aggregates grouped by linked record (a 5,000-record team collection linked into the ledger, and
the whole ledger).

References, timed in the same run on the same data:
- traversal: the same breadth-first walk done the way a client would with get_record_context,
  one neighbour query per node and direction (what traverse's one-query-per-level replaces);
- aggregation: loading every record's data into Python and grouping and summing there (what
  computing in the database replaces);
- grouping by linked record: the same records grouped by a field of their own, the floor a
  grouping over those records cannot go below.
Each row's note says whether the reference reached the same records or the same totals.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, transaction

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat
from records.ids import new_id
from records.models import Record, Relationship
from records.selectors import aggregate, traverse

AREA = "graph"
MAX_RECORDS = 100_000  # the workspace size; --records lowers it, never raises it
HUB_LINKS = 1_000
DEPTH = 3
MAX_NODES = 200  # traverse's own ceiling
TRAVERSAL_TARGET_MS = 50
AGGREGATE_TARGET_MS = 1_000
AGGREGATE_TARGET_SPEEDUP = 4  # at least this many times faster than the Python reference
LINKED_TARGET_MS = 100
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
    links = _links(ids)
    _insert_links(links)
    elapsed = time.perf_counter() - started
    row = Row(
        AREA,
        f"generate {count:,} ledger records + {len(links):,} links (bulk SQL)",
        elapsed,
        "s",
        note=f"{count / elapsed:,.0f} records/s" if elapsed else "",
    )
    return collection_id, ids[0], count, row


def _links(ids: list[str]) -> list[tuple[str, str, str]]:
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


def _insert_links(links: list[tuple[str, str, str]]) -> None:
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


def totals_in_python(collection_id: str) -> dict[str | None, tuple[Any, Any]]:
    """Every record's data loaded and grouped by due month in Python: {month: (sum, avg)}."""
    sums: dict[str | None, float] = defaultdict(float)
    used: dict[str | None, int] = defaultdict(int)
    for fields in Record.objects.filter(collection_id=collection_id).values_list("data", flat=True):
        due, amount = fields.get("due"), fields.get("amount")
        month = due[:7] if isinstance(due, str) and due[:4].isdigit() else None
        used[month] += 0
        if isinstance(amount, int | float) and not isinstance(amount, bool):
            sums[month] += amount
            used[month] += 1
    return {m: (sums[m], sums[m] / used[m]) if used[m] else (None, None) for m in used}


def _same_totals(groups: list[dict[str, Any]], expected: dict[str | None, Any]) -> bool:
    """The dated months agree (the database splits the undated into missing and not_a_date)."""
    dated = {g["key"]: g for g in groups if g["key"] is not None}
    if set(dated) != {month for month in expected if month is not None}:
        return False
    for month, group in dated.items():
        total, average = expected[month]
        got_sum, got_avg = group["metrics"][0]["value"], group["metrics"][1]["value"]
        if not _near(got_sum, total) or not _near(got_avg, average):
            return False
    return True


def _near(got: float | None, expected: float | None) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    return abs(got - expected) <= 1e-6 * max(1.0, abs(expected))


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
    _insert_links([(m, "works_on", rng.choice(entries)) for m in members[: size * 9 // 10]])
    return team_id


def linked_rows(sizes: Sizes, ctx, ledger_id: str, count: int) -> list[Row]:
    """group_by linked over a small collection among many links, and over the whole ledger;
    each against the same records grouped by a field (their own floor)."""
    team_id = team(ctx, ledger_id, count)
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    links = Relationship.objects.filter(workspace_id=data.WORKSPACE).count()
    rows = []
    for collection_id, what in ((team_id, "team collection"), (ledger_id, "whole ledger")):

        def grouped(group_by: dict[str, Any], collection_id: str = collection_id) -> Any:
            return aggregate(
                workspace_id=data.WORKSPACE, collection_id=collection_id, group_by=group_by
            )

        result = grouped({"linked": {}})
        linked = repeat(lambda: grouped({"linked": {}}), max(3, sizes.reference_repeat * 2))
        by_field = repeat(
            lambda: grouped({"field": ["status"]}), max(3, sizes.reference_repeat * 2)
        )
        rows.append(
            Row(
                AREA,
                f"aggregate grouped by linked record, {what} of {result['matched']:,} records "
                f"({total:,} in the workspace, {links:,} links)",
                linked.median_ms,
                "ms",
                p95=linked.p95_ms,
                target=f"< {LINKED_TARGET_MS} ms",
                passed=linked.median_ms < LINKED_TARGET_MS,
                reference=by_field.median_ms,
                reference_what="the same records grouped by a field of their own",
                note=f"{result['group_count']:,} groups",
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

    def totals():
        return aggregate(
            workspace_id=data.WORKSPACE,
            collection_id=collection_id,
            group_by={"field": ["due"], "bucket": "month"},
            metrics=METRICS,
            limit=100,
        )

    walked = walk()
    reached = {node["record_id"] for node in walked["records"]}
    by_node, queries = walk_per_node(hub_id)
    walks = repeat(walk, sizes.repeat)
    per_node = repeat(lambda: walk_per_node(hub_id), max(3, sizes.reference_repeat))

    summed = totals()
    in_python = totals_in_python(collection_id)
    sums = repeat(totals, max(3, sizes.reference_repeat * 2))
    loaded = repeat(lambda: totals_in_python(collection_id), max(3, sizes.reference_repeat))
    skipped = sum(g["metrics"][0]["skipped_non_numeric"] for g in summed["groups"])
    deepest = max((node["depth"] for node in walked["records"]), default=0)
    linked = linked_rows(sizes, ctx, collection_id, count)
    return [
        generated,
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
        Row(
            AREA,
            f"aggregate sum + avg grouped by month, {summed['matched']:,} records",
            sums.median_ms,
            "ms",
            p95=sums.p95_ms,
            target=f"< {AGGREGATE_TARGET_MS // 1000} s and >= {AGGREGATE_TARGET_SPEEDUP}x faster",
            passed=sums.median_ms < AGGREGATE_TARGET_MS
            and loaded.median_ms >= AGGREGATE_TARGET_SPEEDUP * sums.median_ms,
            reference=loaded.median_ms,
            reference_what="every record's data loaded and summed in Python",
            note=f"{summed['group_count']} groups, {skipped:,} non-numeric skipped, "
            f"same totals as reference: "
            f"{'yes' if _same_totals(summed['groups'], in_python) else 'NO'}",
        ),
        *linked,
    ]
