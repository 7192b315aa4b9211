"""The similar-name rule's calibration data (calibration.json, beside this module): the threshold
the rule uses, the labelled pairs it was set on, and the figures it claims on them."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from records.names import normalize_name

Label = Literal["typo", "distinct"]
DATA = Path(__file__).with_name("calibration.json")


@cache
def _data() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return found


def similarity_threshold() -> float:
    return float(_data()["similarity_threshold"])


def claimed() -> dict[str, int]:
    """What the rule scores on the pairs: typos_found, distinct_called_similar."""
    return dict(_data()["claimed"])


def labelled_pairs() -> list[tuple[Label, str, str]]:
    """Every pair with its label: `typo` (one name misspelt) or `distinct` (two names)."""
    labels: tuple[Label, ...] = ("typo", "distinct")
    return [(label, a, b) for label in labels for a, b in _data()[label]]


def score(rule: Callable[[str, str], bool]) -> tuple[int, int, int]:
    """(typos found, typos, distinct pairs called similar) of `rule` on the normalized pairs."""
    found = typos = wrong = 0
    for label, left, right in labelled_pairs():
        similar = rule(normalize_name(left), normalize_name(right))
        typos += label == "typo"
        found += similar and label == "typo"
        wrong += similar and label == "distinct"
    return found, typos, wrong
