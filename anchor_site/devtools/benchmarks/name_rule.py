"""The similar-name rule on the labelled pairs: precision and recall, today's rule beside the old.

"Old" is the character ratio alone; "today" is the ratio with each run of differing words judged
on its own (`workflow.name_rule`). Recall is the share of typo pairs a rule calls similar;
precision the share of pairs it calls similar that are typos. No database is involved.
"""

from __future__ import annotations

from collections.abc import Callable

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.name_pairs import labelled_pairs
from records.names import normalize_name
from workflow.name_rule import is_similar, ratio_alone

AREA = "name_rule"


def score(rule: Callable[[str, str], bool]) -> tuple[int, int, int]:
    """(typos found, typos, distinct pairs called similar)."""
    found = typos = wrong = 0
    for label, left, right in labelled_pairs():
        similar = rule(normalize_name(left), normalize_name(right))
        if label == "typo":
            typos += 1
            found += similar
        else:
            wrong += similar
    return found, typos, wrong


def run() -> list[Row]:
    pairs = labelled_pairs()
    distinct = sum(label == "distinct" for label, _, _ in pairs)
    old_found, typos, old_wrong = score(ratio_alone)
    new_found, _, new_wrong = score(is_similar)
    rows = []
    for name, found, wrong in (
        ("character ratio alone (before)", old_found, old_wrong),
        ("ratio + differing words judged (now)", new_found, new_wrong),
    ):
        recall = 100 * found / typos
        precision = 100 * found / (found + wrong) if found + wrong else 100.0
        rows += [
            Row(
                AREA,
                f"{name}: typo recall, {typos} typo pairs",
                recall,
                "%",
                target=f">= {100 * old_found / typos:.1f}% (the old rule's)",
                passed=found >= old_found,
                note=f"{found} of {typos} found",
            ),
            Row(
                AREA,
                f"{name}: precision, {distinct} look-alike distinct pairs",
                precision,
                "%",
                note=f"{wrong} distinct pairs called similar",
            ),
        ]
    return rows
