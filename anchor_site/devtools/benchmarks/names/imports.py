"""Import review: 100 rows against 10,000 names against difflib (timed on a tenth of the rows,
scaled), and the worst case the comparison cap allows (a scope built in memory of the name
lengths that cost most per counted comparison, sized to sit exactly at MAX_COMPARISONS)."""

from __future__ import annotations

import random
from typing import Any
from unittest import mock

from anchor_site.devtools.benchmarks import data
from anchor_site.devtools.benchmarks.measure import Row, Sizes, repeat, timed_row
from anchor_site.devtools.benchmarks.names.resolution import difflib_matches
from records.names import normalize_name
from workflow import imports
from workflow.names.cache import scope_names
from workflow.names.view import ScopeNames


def rows_for(names: list[str], count: int) -> list[dict[str, Any]]:
    """A fifth typos of stored names, a few repeats of each other, the rest new names."""
    fresh = data.person_names(count, seed=99)
    rows: list[dict[str, Any]] = []
    for index in range(count):
        if index % 5 == 0:
            title = data.typo(names[index * 37 % len(names)], seed=index)
        elif index % 10 == 3:
            title = rows[index - 1]["title"]
        else:
            title = fresh[index] + " Junior"
        rows.append({"key": str(index), "title": title, "data": {}})
    return rows


def run(sizes: Sizes, workspace_id: str, collection_id: str, names: list[str]) -> list[Row]:
    rows = rows_for(names, sizes.import_rows)
    stored = scope_names(workspace_id, collection_id).names
    samples = repeat(lambda: imports.review_rows(workspace_id, collection_id, rows), sizes.repeat)
    sample_rows = [normalize_name(r["title"]) for r in rows[: max(1, len(rows) // 10)]]

    def reference() -> None:
        for title in sample_rows:
            difflib_matches(title, stored)

    scaled = repeat(reference, sizes.reference_repeat, warmup=0).median_ms
    scaled *= len(rows) / len(sample_rows)
    return [
        timed_row(
            f"import review, {len(rows)} rows against {len(stored):,} names",
            samples,
            under_ms=300,
            reference=scaled,
            reference_what=f"difflib, timed on {len(sample_rows)} rows and scaled",
        ),
        *(_at_cap(sizes, workspace_id, collection_id, n) for n in (40, 300)),
    ]


def _text(rng: random.Random, vocabulary: list[str], length: int) -> str:
    out: list[str] = []
    while len(" ".join(out)) < length:
        out.append(rng.choice(vocabulary))
    return " ".join(out)[:length].strip().ljust(length, "x")


def _at_cap(sizes: Sizes, workspace_id: str, collection_id: str, length: int) -> Row:
    rng = random.Random(length)
    vocabulary = data.words(5000, seed=length)
    rows: list[dict[str, Any]] = [
        {"key": str(i), "title": _text(rng, vocabulary, length), "data": {}}
        for i in range(sizes.import_rows)
    ]
    per_name = imports.review_cost([r["title"] for r in rows], ["x" * length]) / len(rows)
    count = int(imports.MAX_COMPARISONS / (len(rows) * per_name))
    scope = ScopeNames.build(
        0, [(f"name-{index}", _text(rng, vocabulary, length), False) for index in range(count)]
    )
    assert imports.review_cost([r["title"] for r in rows], scope.names) <= imports.MAX_COMPARISONS
    with mock.patch.object(imports, "scope_names", lambda *_: scope):
        samples = repeat(
            lambda: imports.review_rows(workspace_id, collection_id, rows),
            max(3, sizes.reference_repeat),
        )
    return timed_row(
        f"import review at the cap, {len(rows)} rows x {count:,} names of {length} chars",
        samples,
        under_ms=1000,
        note=f"MAX_COMPARISONS = {imports.MAX_COMPARISONS:,} counted comparisons",
    )
