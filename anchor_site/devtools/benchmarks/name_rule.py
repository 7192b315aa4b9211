"""The similar-name rule on the labelled pairs: precision and recall, today's rule beside the old.

"Old" is the character ratio alone; "today" is the ratio with each run of differing words judged
on its own (`workflow.names.rule`). Recall is the share of typo pairs a rule calls similar;
precision the share of pairs it calls similar that are typos. No database is involved.
"""

from __future__ import annotations

from collections.abc import Callable

from anchor_site.devtools.benchmarks.measure import Row
from anchor_site.devtools.benchmarks.name_pairs import labelled_pairs
from records.names import normalize_name
from workflow.names.rule import is_similar, ratio_alone

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

    # The old rule is the reference measured in the same run, never a row of its own: its
    # figures are what the rule now must hold or beat, on both sides of the judgement.
    def percent(found: int, wrong: int) -> float:
        return 100 * found / (found + wrong) if found + wrong else 100.0

    old_recall, new_recall = 100 * old_found / typos, 100 * new_found / typos
    old_precision, new_precision = percent(old_found, old_wrong), percent(new_found, new_wrong)
    rows = [
        Row(
            AREA,
            f"ratio + differing words judged: typo recall, {typos} typo pairs",
            new_recall,
            "%",
            target=">= the character ratio alone",
            passed=new_found >= old_found,
            reference=old_recall,
            reference_what=f"the character ratio alone, same pairs ({old_found} found)",
            note=f"{new_found} of {typos} found",
        ),
        Row(
            AREA,
            f"ratio + differing words judged: precision, {distinct} look-alike distinct pairs",
            new_precision,
            "%",
            target=">= the character ratio alone",
            passed=new_precision >= old_precision,
            reference=old_precision,
            reference_what=f"the character ratio alone, same pairs ({old_wrong} called similar)",
            note=f"{new_wrong} distinct pairs called similar",
        ),
    ]
    return rows
