"""When two names read as one name misspelt, and what differs between them.

The character ratio alone (rapidfuzz's Indel ratio, at least 0.75) cannot tell a typo from a
template: "Priya feedback on Kirat's coding interview" and "Rahul feedback on Kirat's coding
interview" score 0.88 because most of their letters are the template's. So the names are also
aligned word by word, and each run of differing words is judged on its own: a typo changes a
run a little (one edit, or a run that still scores 0.75), a different name replaces it ("Priya"
/ "Rahul", "Sharma" / "Verma"), and a different number is a different thing ("Sprint 14" /
"Sprint 15"). Added or dropped words ("Kirat Singh" / "Kirat K Singh") are not judged: they can
be the same name written more fully, so the ratio decides.

The threshold and the labelled pairs it was set on are data (calibration.json, read here with
the figures the rule claims on them): on them this keeps every typo the ratio finds and refuses
the templated near misses; `manage.py benchmark --only name_rule` prints both rules' precision
and recall.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rapidfuzz.distance import OSA, Indel, Levenshtein

from records.names import normalize_name

CALIBRATION: dict[str, Any] = json.loads(
    Path(__file__).with_name("calibration.json").read_text(encoding="utf-8")
)
SIMILARITY_THRESHOLD = float(CALIBRATION["similarity_threshold"])
DIGITS = re.compile(r"\d+")


def _is_typo(left_words: list[str], right_words: list[str]) -> bool:
    """Whether a run of differing words is a misspelling of the same words, rather than other
    words or another number."""
    left, right = "".join(left_words), "".join(right_words)
    if not left or not right:
        return True  # a word added or dropped; the whole-name ratio decides
    if DIGITS.findall(left) != DIGITS.findall(right):
        return False
    # Spaces are ignored so "RahulSharma" meets "Rahul Sharma".
    return (
        OSA.distance(left, right) <= 1
        or Indel.normalized_similarity(left, right) >= SIMILARITY_THRESHOLD
    )


def ratio(left: str, right: str) -> float:
    """The character similarity of two normalized names, in 0..1."""
    return Indel.normalized_similarity(left, right)


def ratio_alone(left: str, right: str) -> bool:
    """The rule before word runs were judged; kept for the benchmark's comparison."""
    return ratio(left, right) >= SIMILARITY_THRESHOLD


def is_similar(left: str, right: str, score: float | None = None) -> bool:
    """Whether two normalized names read as one name misspelt (`score`: their ratio, if known)."""
    if (ratio(left, right) if score is None else score) < SIMILARITY_THRESHOLD:
        return False
    left_words, right_words = left.split(), right.split()
    spans = _spans(left_words, right_words)
    return all(_is_typo(left_words[a:b], right_words[c:d]) for a, b, c, d in spans)


def what_differs(left_display: str, right_display: str, left: str, right: str) -> str:
    """ "differs: Kriat / Kirat" in the names' own spelling; empty when they differ in case only.

    `left`/`right` are the normalized names; their words are mapped back to the displayed
    words when normalization kept the word count (it almost always does).
    """
    shown_left, shown_right = left_display.split(), right_display.split()
    if len(shown_left) != len(left.split()) or len(shown_right) != len(right.split()):
        shown_left, shown_right = left.split(), right.split()
    runs = [
        f"{' '.join(shown_left[a:b]) or '(nothing)'} / {' '.join(shown_right[c:d]) or '(nothing)'}"
        for a, b, c, d in _spans(left.split(), right.split())
    ]
    return f"differs: {'; '.join(runs)}" if runs else ""


def _spans(left: list[str], right: list[str]) -> list[tuple[int, int, int, int]]:
    """Each run of differing words as (left start, left end, right start, right end): the word
    alignment's adjacent edits merged, so "Priya Sharma" / "Rahul Verma" is one run."""
    spans: list[tuple[int, int, int, int]] = []
    for op in Levenshtein.opcodes(left, right):
        if op.tag == "equal":
            continue
        if spans and spans[-1][1] == op.src_start and spans[-1][3] == op.dest_start:
            start = spans.pop()
            spans.append((start[0], op.src_end, start[2], op.dest_end))
        else:
            spans.append((op.src_start, op.src_end, op.dest_start, op.dest_end))
    return spans


def claimed() -> dict[str, int]:
    """What the rule scores on the pairs: typos_found, distinct_called_similar."""
    return dict(CALIBRATION["claimed"])


def labelled_pairs() -> list[tuple[str, str, str]]:
    """Every pair with its label: `typo` (one name misspelt) or `distinct` (two names)."""
    return [(label, a, b) for label in ("typo", "distinct") for a, b in CALIBRATION[label]]


def score(rule: Callable[[str, str], bool]) -> tuple[int, int, int]:
    """(typos found, typos, distinct pairs called similar) of `rule` on the normalized pairs."""
    found = typos = wrong = 0
    for label, left, right in labelled_pairs():
        similar = rule(normalize_name(left), normalize_name(right))
        typos += label == "typo"
        found += similar and label == "typo"
        wrong += similar and label == "distinct"
    return found, typos, wrong
