"""The similar-name rule's calibration data (calibration.json, beside this module): the threshold
the rule uses, the labelled pairs it was set on, and the figures it claims on them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from records.names import normalize_name

DATA: dict[str, Any] = json.loads(
    Path(__file__).with_name("calibration.json").read_text(encoding="utf-8")
)


def similarity_threshold() -> float:
    return float(DATA["similarity_threshold"])


def claimed() -> dict[str, int]:
    """What the rule scores on the pairs: typos_found, distinct_called_similar."""
    return dict(DATA["claimed"])


def labelled_pairs() -> list[tuple[str, str, str]]:
    """Every pair with its label: `typo` (one name misspelt) or `distinct` (two names)."""
    return [(label, a, b) for label in ("typo", "distinct") for a, b in DATA[label]]


def score(rule: Callable[[str, str], bool]) -> tuple[int, int, int]:
    """(typos found, typos, distinct pairs called similar) of `rule` on the normalized pairs."""
    found = typos = wrong = 0
    for label, left, right in labelled_pairs():
        similar = rule(normalize_name(left), normalize_name(right))
        typos += label == "typo"
        found += similar and label == "typo"
        wrong += similar and label == "distinct"
    return found, typos, wrong
