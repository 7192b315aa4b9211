"""aggregate against a straightforward computation in Python, over random data.

The SQL groups records by a field's small raw value first and works out what a key means once
per distinct value; linked groupings read links either per matched record or once per
workspace, whichever side is smaller. Each path must give what reading every record in Python
gives: the same groups, counts, used + skipped_missing + skipped_non_numeric, sums, averages,
minima and maxima, with archived records and other workspaces left out.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from records import selectors
from records.models import Record
from records.selectors import aggregation
from tests.conftest import WORKSPACE, link, make_collection, make_record

KINDS = ["a", "b", 'q"uote', "é", "back\\slash", 1, 1.0, 2.5, True, False, None, {"x": 1}, [1]]
AMOUNTS = [3, -7, 2.5, 1e3, 0, "95 LPA", True, None, {"n": 1}, [2]]
DUES = ["2026-01-05", "2026-02-10T10:00:00", "2025-12-31", "2026-1-05", "soon", 20260101, None]
MISSING = object()
METRICS = [
    {"op": "count"},
    {"op": "sum", "field": ["amount"]},
    {"op": "avg", "field": ["amount"]},
    {"op": "min", "field": ["amount"]},
    {"op": "max", "field": ["amount"]},
]


def pick(rng: random.Random, values: list[Any]) -> Any:
    return MISSING if rng.random() < 0.15 else rng.choice(values)


@pytest.fixture
def ledger(ctx, other_ctx):
    """40 records with mixed values (some fields missing), random links of two types among
    them and to outsiders, two archived records, and a look-alike in another workspace."""
    rng = random.Random(29)
    entries = make_collection(ctx, "entries")
    outsiders = make_collection(ctx, "outsiders")
    records = []
    for index in range(40):
        fields = {
            key: value
            for key, value in (
                ("kind", pick(rng, KINDS)),
                ("amount", pick(rng, AMOUNTS)),
                ("due", pick(rng, DUES)),
            )
            if value is not MISSING
        }
        records.append(make_record(ctx, entries, f"Entry {index}", **fields))
    others = [make_record(ctx, outsiders, f"Outsider {i}", amount=i) for i in range(4)]
    links: set[tuple[str, str, str]] = set()
    for _ in range(30):
        source = rng.choice(records + others)
        target = rng.choice(records + others)
        links.add((source.pk, rng.choice(["pays", "owes"]), target.pk))
    for source_id, kind, target_id in sorted(links):
        link(ctx, Record(pk=source_id), kind, Record(pk=target_id))
    archived = [r.pk for r in records[:2]]
    Record.objects.filter(pk__in=archived).update(archived_at=timezone.now())
    theirs = make_collection(other_ctx, "entries")
    make_record(other_ctx, theirs, "Theirs", kind="a", amount=5, due="2026-01-05")
    active = [
        {"id": r.pk, "data": r.data} for r in Record.objects.filter(pk__in=[x.pk for x in records])
    ]
    matched = [r for r in active if r["id"] not in archived]
    return {"collection": entries, "matched": matched, "links": sorted(links)}


def numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def expected_group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    values = [r["data"].get("amount", MISSING) for r in rows]
    used = [v for v in values if numeric(v)]
    missing = sum(1 for v in values if v is MISSING)
    return {
        "count": len(rows),
        "used": len(used),
        "skipped_missing": missing,
        "skipped_non_numeric": len(rows) - len(used) - missing,
        "sum": sum(used) if used else None,
        "avg": sum(used) / len(used) if used else None,
        "min": min(used) if used else None,
        "max": max(used) if used else None,
    }


def got_group(group: dict[str, Any]) -> dict[str, Any]:
    by_op = {m["op"]: m for m in group["metrics"]}
    amount = by_op["sum"]
    assert all(
        (m["used"], m["skipped_missing"], m["skipped_non_numeric"])
        == (amount["used"], amount["skipped_missing"], amount["skipped_non_numeric"])
        for op, m in by_op.items()
        if op != "count"
    )
    assert by_op["count"]["value"] == group["count"]
    assert (
        amount["used"] + amount["skipped_missing"] + amount["skipped_non_numeric"]
        == (group["count"])
    )
    return {
        "count": group["count"],
        "used": amount["used"],
        "skipped_missing": amount["skipped_missing"],
        "skipped_non_numeric": amount["skipped_non_numeric"],
        **{op: by_op[op]["value"] for op in ("sum", "avg", "min", "max")},
    }


def same(got: dict[Any, dict[str, Any]], expected: dict[Any, dict[str, Any]]) -> None:
    assert set(got) == set(expected)
    for key, stats in expected.items():
        assert got[key] == pytest.approx(stats), key


def signature(value: Any) -> str:
    """Tells 1 from 1.0 from True, as the grouping must."""
    return f"{type(value).__name__}:{json.dumps(value, sort_keys=True)}"


def run(ledger, **kwargs) -> dict[str, Any]:
    return selectors.aggregate(
        workspace_id=WORKSPACE,
        collection_id=ledger["collection"].pk,
        metrics=METRICS,
        limit=100,
        **kwargs,
    )


def test_group_by_field_matches_python(ledger):
    result = run(ledger, group_by={"field": ["kind"]})
    expected: dict[str, list] = {}
    for row in ledger["matched"]:
        value = row["data"].get("kind", MISSING)
        key = "missing" if value is MISSING else signature(value)
        expected.setdefault(key, []).append(row)
    got = {
        "missing" if g.get("missing") else signature(g["key"]): got_group(g)
        for g in result["groups"]
    }
    same(got, {key: expected_group(rows) for key, rows in expected.items()})
    assert result["matched"] == len(ledger["matched"]) == 38
    assert result["group_count"] == len(expected)


@pytest.mark.parametrize(("bucket", "length"), [("month", 7), ("year", 4)])
def test_group_by_date_bucket_matches_python(ledger, bucket, length):
    result = run(ledger, group_by={"field": ["due"], "bucket": bucket})
    pattern = re.compile(r"[0-9]{4}-[0-9]{2}" if bucket == "month" else r"[0-9]{4}")
    expected: dict[str, list] = {}
    for row in ledger["matched"]:
        value = row["data"].get("due", MISSING)
        if value is MISSING:
            key = "missing"
        elif isinstance(value, str) and pattern.match(value):
            key = value[:length]
        else:
            key = "not_a_date"
        expected.setdefault(key, []).append(row)
    got = {
        "missing" if g.get("missing") else "not_a_date" if g.get("not_a_date") else g["key"]: (
            got_group(g)
        )
        for g in result["groups"]
    }
    same(got, {key: expected_group(rows) for key, rows in expected.items()})


def test_totals_and_where_match_python(ledger):
    result = run(ledger)
    assert got_group(result["totals"]) == pytest.approx(expected_group(ledger["matched"]))
    assert result["matched"] == 38
    filtered = run(ledger, where=[{"field": ["amount"], "op": "gte", "value": 0}])
    rows = [
        r
        for r in ledger["matched"]
        if numeric(r["data"].get("amount")) and r["data"]["amount"] >= 0
    ]
    assert got_group(filtered["totals"]) == pytest.approx(expected_group(rows))
    sums = selectors.aggregate(
        workspace_id=WORKSPACE,
        collection_id=ledger["collection"].pk,
        metrics=[{"op": "sum", "field": ["amount"]}, {"op": "avg", "field": ["amount"]}],
    )["totals"]["metrics"]
    expected = expected_group(ledger["matched"])
    assert [m["value"] for m in sums] == pytest.approx([expected["sum"], expected["avg"]])
    assert sums[0]["skipped_non_numeric"] == expected["skipped_non_numeric"]
    nothing = run(ledger, where=[{"field": ["amount"], "op": "gte", "value": 10**6}])
    assert nothing["matched"] == 0 and nothing["totals"]["count"] == 0


@pytest.mark.parametrize("links_per_record", [0, 10**6], ids=["per-record", "by-workspace"])
@pytest.mark.parametrize(
    ("linked", "directions"),
    [
        ({}, ("out", "in")),
        ({"direction": "outgoing", "relationship_types": ["pays"]}, ("out",)),
        ({"direction": "incoming"}, ("in",)),
    ],
)
def test_group_by_linked_matches_python(ledger, monkeypatch, links_per_record, linked, directions):
    monkeypatch.setattr(aggregation, "LINKS_PER_RECORD", links_per_record)
    types = linked.get("relationship_types")
    others: dict[str, set[str | None]] = {r["id"]: set() for r in ledger["matched"]}
    for source, kind, target in ledger["links"]:
        if types and kind not in types:
            continue
        if "out" in directions and source in others:
            others[source].add(target)
        if "in" in directions and target in others:
            others[target].add(source)
    expected: dict[str | None, list] = {}
    for row in ledger["matched"]:
        for other in others[row["id"]] or {None}:
            expected.setdefault(other, []).append(row)
    with CaptureQueriesContext(connection) as queries:
        result = run(ledger, group_by={"linked": linked})
    got = {g["key"]: got_group(g) for g in result["groups"]}
    same(got, {key: expected_group(rows) for key, rows in expected.items()})
    assert result["matched"] == 38 and result["group_count"] == len(expected)
    reads_by_workspace = any(
        "rel.workspace_id" in q["sql"] and "GROUP BY" in q["sql"] for q in queries.captured_queries
    )
    assert reads_by_workspace == (links_per_record > 0)


def test_grouping_by_a_field_is_one_statement(ledger):
    """The matched total comes with the groups, not from a count of its own."""
    for group_by in (None, {"field": ["kind"]}, {"field": ["due"], "bucket": "month"}):
        with CaptureQueriesContext(connection) as queries:
            result = run(ledger, group_by=group_by)
        reads = [q for q in queries.captured_queries if "records_record" in q["sql"]]
        assert len(reads) == 1, [q["sql"] for q in reads]
        assert result["matched"] == 38
