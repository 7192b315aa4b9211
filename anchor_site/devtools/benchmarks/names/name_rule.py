"""The similar-name rule on its labelled pairs (workflow/names/calibration.json): precision and
recall of today's rule (word runs judged) against the character ratio alone. No database."""

from __future__ import annotations

from anchor_site.devtools.benchmarks.measure import Row
from workflow.names.rule import is_similar, labelled_pairs, ratio_alone, score


def run() -> list[Row]:
    distinct = sum(label == "distinct" for label, _, _ in labelled_pairs())
    old_found, typos, old_wrong = score(ratio_alone)
    new_found, _, new_wrong = score(is_similar)

    def precision(found: int, wrong: int) -> float:
        return 100 * found / (found + wrong) if found + wrong else 100.0

    # The old rule is the same-run reference: what the rule now must hold or beat.
    same = "the character ratio alone, same pairs"
    return [
        Row(
            f"ratio + differing words judged: typo recall, {typos} typo pairs",
            100 * new_found / typos,
            "%",
            target=">= the character ratio alone",
            passed=new_found >= old_found,
            reference=100 * old_found / typos,
            reference_what=f"{same} ({old_found} found)",
            note=f"{new_found} of {typos} found",
        ),
        Row(
            f"ratio + differing words judged: precision, {distinct} look-alike distinct pairs",
            precision(new_found, new_wrong),
            "%",
            target=">= the character ratio alone",
            passed=precision(new_found, new_wrong) >= precision(old_found, old_wrong),
            reference=precision(old_found, old_wrong),
            reference_what=f"{same} ({old_wrong} called similar)",
            note=f"{new_wrong} distinct pairs called similar",
        ),
    ]
