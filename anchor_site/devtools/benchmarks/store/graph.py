"""Traversal and totals at scale: a ledger of up to 100,000 records with a hub of 1,000 links,
a 3-hop traverse from the hub, and one aggregate row per shape. References, on the same data in
the same run: the same walk one neighbour query per node and direction (as a client would with
get_record_context); for aggregates, the plainest SQL for the same answer on this backend, each
row saying whether it got the same answer. A missed row prints its call's SQL, plans and Python.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.db import connection

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat, timed, timed_row
from anchor_site.devtools.benchmarks.profile import compared, explained
from records.models import Record, Relationship
from records.selectors import aggregate, traverse
from records.services import WriteContext

MAX_RECORDS = 100_000  # --records lowers it, never raises it
HUB_LINKS = 1_000
DEPTH = 3
MAX_NODES = 200  # traverse's own ceiling
TRAVERSAL_TARGET_MS = 50
AGGREGATE_TARGET_MS = 100  # every aggregate shape, at 100,000 records, both backends
TEAM_SIZE = 5_000  # the collection the linked grouping once timed out on
METRICS = [{"op": "sum", "field": ["amount"]}, {"op": "avg", "field": ["amount"]}]


def ledger(count: int, seed: int = 21) -> list[data.BulkRecord]:
    """Entries with an ISO `due` date over two years and an `amount` that is usually a number:
    about 2% are text like "95 LPA", 1% lack it; 1% have no due date, 1% a non-date one."""
    rng = random.Random(seed)
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
            due = datetime(2023, 1, 1) + timedelta(days=rng.randrange(730))
            fields["due"] = due.date().isoformat()
        title = "Graph hub" if index == 0 else f"Ledger entry {index}"
        rows.append(data.BulkRecord(title, fields))
    return rows


def links(ids: list[str]) -> list[tuple[str, str, str]]:
    """The hub links to HUB_LINKS entries; each of those depends on two more, and a tenth of
    the ledger has one random related_to link: (source, type, target), unique."""
    rng = random.Random(7)
    hub, rest = ids[0], ids[1:]
    found = dict.fromkeys((hub, "includes", target) for target in rest[:HUB_LINKS])
    for source in rest[:HUB_LINKS]:
        for target in rng.sample(rest, min(2, len(rest))):
            if target != source:
                found[(source, "depends_on", target)] = None
    for _ in range(len(ids) // 10):
        source, target = rng.sample(rest, 2) if len(rest) > 1 else (hub, rest[0])
        found[(source, "related_to", target)] = None
    return list(found)


def walk_per_node(start_id: str) -> tuple[set[str], int]:
    """traverse's walk, one query per node and direction: (reached record IDs, queries)."""
    depths = {start_id: 0}
    frontier = [start_id]
    queries = 0
    for depth in range(1, DEPTH + 1):
        following = []
        for record_id in frontier:
            for own, other in (("source", "target"), ("target", "source")):
                queries += 1
                linked = Relationship.objects.filter(
                    workspace_id=data.WORKSPACE, **{f"{own}_id": record_id}
                ).order_by("created_at", "id")
                fields = ("id", "relationship_type", f"{other}__title", f"{other}__archived_at")
                for row in linked.values(f"{other}_id", *fields):
                    if (found := row[f"{other}_id"]) not in depths and len(depths) <= MAX_NODES:
                        depths[found] = depth
                        following.append(found)
        frontier = following
    return set(depths) - {start_id}, queries


# --- the aggregate references: the plainest SQL for the same answer ----------------------------


def _text(key: str) -> str:
    return (
        f"json_extract(r.data, '$.{key}')"
        if connection.vendor == "sqlite"
        else f"(r.data ->> '{key}')"
    )


def _number(key: str) -> str:
    if connection.vendor == "sqlite":
        is_number = f"json_type(r.data, '$.{key}') IN ('integer', 'real')"
        return f"CASE WHEN {is_number} THEN json_extract(r.data, '$.{key}') END"
    is_number = f"jsonb_typeof(r.data -> '{key}') = 'number'"
    return f"CASE WHEN {is_number} THEN (r.data ->> '{key}')::numeric END"


MATCHED = "r.workspace_id = %s AND r.archived_at IS NULL AND r.collection_id = %s"


def plain(sql: str, collection_id: str, copies: int = 1) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, (data.WORKSPACE, collection_id) * copies)
        return list(cursor.fetchall())


def plain_by_field(collection_id: str, where: str = "") -> dict[Any, int]:
    """Counts by status, the status read as text (no canonical JSON keys)."""
    status = _text("status")
    sql = f"SELECT {status}, COUNT(*) FROM records_record r WHERE {MATCHED}{where} GROUP BY 1"
    return dict(plain(sql, collection_id))


def plain_by_month(collection_id: str) -> dict[Any, tuple[Any, Any]]:
    """Sum and avg of the numeric amounts by the due date's first 7 characters."""
    amount = _number("amount")
    month = f"substr({_text('due')}, 1, 7)"
    sql = f"SELECT {month}, SUM({amount}), AVG({amount}) FROM records_record r WHERE {MATCHED} "
    sql += "GROUP BY 1"
    return {key: (total, average) for key, total, average in plain(sql, collection_id)}


def plain_totals(collection_id: str) -> tuple[Any, ...]:
    amount = _number("amount")
    sql = f"SELECT COUNT(*), SUM({amount}), AVG({amount}) FROM records_record r WHERE {MATCHED}"
    return plain(sql, collection_id)[0]


def plain_by_linked(collection_id: str) -> dict[Any, int]:
    """Each matched record once per record linked to it either way, or once with NULL."""
    sql = (
        "SELECT linked, COUNT(*) FROM ("
        "SELECT r.id, rel.target_id AS linked FROM records_record r "
        f"JOIN records_relationship rel ON rel.source_id = r.id WHERE {MATCHED} "
        "UNION SELECT r.id, rel.source_id FROM records_record r "
        f"JOIN records_relationship rel ON rel.target_id = r.id WHERE {MATCHED} "
        f"UNION SELECT r.id, NULL FROM records_record r WHERE {MATCHED} "
        "AND NOT EXISTS (SELECT 1 FROM records_relationship x WHERE x.source_id = r.id) "
        "AND NOT EXISTS (SELECT 1 FROM records_relationship x WHERE x.target_id = r.id)"
        ") pairs GROUP BY linked"
    )
    return dict(plain(sql, collection_id, copies=3))


def _same_counts(result: dict[str, Any], expected: dict[str, Any]) -> bool:
    """The groups returned (the largest, at most the limit) count what the reference does."""
    got = {group["key"]: group["count"] for group in result["groups"]}
    return result["group_count"] == len(expected) and all(
        expected.get(k) == n for k, n in got.items()
    )


def _near(got: Any, expected: Any) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    return abs(float(got) - float(expected)) <= 1e-6 * max(1.0, abs(float(expected)))


def _same_totals(result: dict[str, Any], expected: dict[Any, tuple[Any, Any]]) -> bool:
    """The dated months agree (the reference keeps "soon" as a month of its own and has no
    missing/not_a_date split)."""
    dated = {g["key"]: g["metrics"] for g in result["groups"] if g["key"] is not None}
    months = {m for m in expected if isinstance(m, str) and m[:4].isdigit()}
    return set(dated) == months and all(
        _near(dated[m][0]["value"], expected[m][0]) and _near(dated[m][1]["value"], expected[m][1])
        for m in months
    )


def _row(what: str, sizes: Sizes, measured: Any, reference: Any, same: bool, note: str = "") -> Row:
    return compared(
        what,
        sizes,
        measured,
        reference,
        passed=lambda ours, _: ours < AGGREGATE_TARGET_MS,
        target=f"< {AGGREGATE_TARGET_MS} ms",
        reference_what="the plainest SQL for the same answer",
        note=f"{note}same answer as reference: {'yes' if same else 'NO'}",
    )


def _same_sums(result: dict[str, Any], expected: tuple[Any, ...]) -> bool:
    sums, (count, total, average) = result["totals"], expected
    values = [metric["value"] for metric in sums["metrics"]]
    return sums["count"] == count and _near(values[0], total) and _near(values[1], average)


def aggregate_rows(sizes: Sizes, ledger_id: str) -> list[Row]:
    """One row per aggregate shape over the whole ledger."""

    def shape(what: str, arguments: Any, plain: Callable[[str], Any], same: Any) -> Row:
        run = partial(aggregate, workspace_id=data.WORKSPACE, collection_id=ledger_id, **arguments)
        result, reference = run(), partial(plain, ledger_id)
        groups = result.get("groups", [])
        skipped = sum(m.get("skipped_non_numeric", 0) for g in groups for m in g["metrics"][:1])
        note = f"{len(groups)} groups, {skipped:,} non-numeric skipped; "
        what = f"{what}, {result['matched']:,} records"
        return _row(what, sizes, run, reference, same(result, reference()), note * bool(skipped))

    by_field = {"group_by": {"field": ["status"]}}
    by_month = {"group_by": {"field": ["due"], "bucket": "month"}, "metrics": METRICS, "limit": 100}
    where = {"where": [{"field": ["amount"], "op": "gte", "value": 50000}], **by_field}
    plain_where = partial(plain_by_field, where=f" AND ({_number('amount')}) >= 50000")
    return [
        shape("aggregate count grouped by a field", by_field, plain_by_field, _same_counts),
        shape("aggregate sum + avg grouped by month", by_month, plain_by_month, _same_totals),
        shape("aggregate sum + avg, no group_by", {"metrics": METRICS}, plain_totals, _same_sums),
        shape("aggregate count by a field with a where filter", where, plain_where, _same_counts),
    ]


def linked_rows(sizes: Sizes, ctx: WriteContext, ledger_id: str, count: int) -> list[Row]:
    """group_by linked over a small collection among many links, and over the whole ledger.
    The team: up to TEAM_SIZE people, nine in ten working on a ledger entry."""
    size = max(10, min(TEAM_SIZE, count // 20))
    team_id = data.collection(ctx, "bench linked team").pk
    data.bulk_insert(
        team_id,
        (data.BulkRecord(f"Member {i}", {"status": data.STATUSES[i % 5]}) for i in range(size)),
    )
    members = list(Record.objects.filter(collection_id=team_id).values_list("id", flat=True))
    entries = list(
        Record.objects.filter(collection_id=ledger_id).values_list("id", flat=True)[:2000]
    )
    rng = random.Random(3)
    data.bulk_links([(m, "works_on", rng.choice(entries)) for m in members[: size * 9 // 10]])
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()
    linked = Relationship.objects.filter(workspace_id=data.WORKSPACE).count()
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
                f"({total:,} in the workspace, {linked:,} links)",
                sizes,
                grouped,
                lambda collection_id=collection_id: plain_by_linked(collection_id),
                _same_counts(result, plain_by_linked(collection_id)),
                f"{result['group_count']:,} groups; ",
            )
        )
    return rows


def build(ctx: WriteContext, count: int) -> tuple[str, list[str], int]:
    """The ledger and its links: (its ID, its record IDs in order, links made)."""
    ledger_id = data.collection(ctx, "bench ledger").pk
    data.bulk_insert(ledger_id, ledger(count))
    ordered = Record.objects.filter(collection_id=ledger_id).order_by("created_at", "id")
    ids = list(ordered.values_list("id", flat=True))
    made = links(ids)
    data.bulk_links(made)
    return ledger_id, ids, len(made)


def run(sizes: Sizes, ctx: WriteContext) -> list[Row]:
    count = max(2, min(sizes.records, MAX_RECORDS))
    elapsed, (ledger_id, ids, made) = timed(lambda: build(ctx, count))
    total = Record.objects.filter(workspace_id=data.WORKSPACE).count()

    def walk() -> dict[str, Any]:
        return traverse(
            workspace_id=data.WORKSPACE,
            start_record_id=ids[0],
            max_depth=DEPTH,
            direction="both",
            max_nodes=MAX_NODES,
        )

    walked = walk()
    reached = {node["record_id"] for node in walked["records"]}
    by_node, queries = walk_per_node(ids[0])
    walks = repeat(walk, sizes.repeat)
    per_node = repeat(lambda: walk_per_node(ids[0]), max(3, sizes.reference_repeat))
    deepest = max((node["depth"] for node in walked["records"]), default=0)
    # Profiled before the team's links are added, on the data it was timed on.
    traversal = explained(
        timed_row(
            f"{DEPTH}-hop traversal from a hub of {min(HUB_LINKS, count - 1):,} links, max_nodes "
            f"{MAX_NODES}, {total:,} records",
            walks,
            under_ms=TRAVERSAL_TARGET_MS,
            reference=per_node.median_ms,
            reference_what=f"same walk, a neighbour query per node and direction ({queries})",
            note=f"{walked['reached_count']} reached, deepest {deepest}, truncated="
            f"{walked['truncated']}, same records as reference: "
            + ("yes" if reached == by_node else "NO"),
        ),
        sizes,
        walk,
    )
    generated = Row(
        f"generate {count:,} ledger records + {made:,} links (bulk SQL)",
        elapsed,
        "s",
        note=f"{count / elapsed:,.0f} records/s" if elapsed else "",
    )
    return [
        generated,
        traversal,
        *aggregate_rows(sizes, ledger_id),
        *linked_rows(sizes, ctx, ledger_id, count),
    ]
