"""The labelled set search by meaning is measured and calibrated on, and what was taken from it.

`thresholds.json` holds the confidence thresholds the search reads (records.selectors.
meaning_search) with the figures they were measured at; the benchmark (anchor_site/devtools/
benchmarks/meaning.py) and a test read the same set. `set/` is a team's memory: decisions,
incidents, people, expenses, tickets, meetings, services and vendors. Its targets are written
by hand (set/targets/*.json: {collection, title, data, ask, same, also}); `ask` holds questions
in other words (no content word shared with the target), `same` questions in its own words,
`also` other targets that answer them too. The filler around them is templated from
vocabularies (set/filler.json) with a seeded random.Random, so a target is found among
plausible distractors of its own shape; set/none.json holds questions nothing in it answers.
"""

from __future__ import annotations

import copy
import json
import random
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Literal

DATA = Path(__file__).parent
SEED = 32
FIRST_DAY = date(2025, 1, 6)
DAYS = 600
SLOT = re.compile(r"\{(\w+)\}")

Kind = Literal["other_words", "same_words", "none"]


@dataclass(frozen=True)
class StoreRecord:
    collection: str
    title: str
    data: dict[str, Any]


@dataclass(frozen=True)
class LabelledQuery:
    text: str
    expected: tuple[str, ...]  # titles that should be on the first page; () for kind "none"
    kind: Kind


@cache
def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def thresholds() -> dict[str, float]:
    return dict(load("thresholds.json")["confidence"])


def collections() -> dict[str, str]:
    """Collection name -> what it holds."""
    return dict(load("set/collections.json"))


def queries() -> list[LabelledQuery]:
    """Every labelled question, in the order the targets are written, then those of no answer."""
    found: list[LabelledQuery] = []
    for target in _targets():
        expected = (target["title"], *target.get("also", ()))
        found += [LabelledQuery(text, expected, "other_words") for text in target.get("ask", ())]
        found += [LabelledQuery(text, expected, "same_words") for text in target.get("same", ())]
    return found + [LabelledQuery(text, (), "none") for text in load("set/none.json")]


def store(size: int | None = None) -> list[StoreRecord]:
    """Targets, then filler (each collection's count scaled so the whole is about `size`
    records; None: as written), the same list on every call. Each call copies the data."""
    return [replace(record, data=copy.deepcopy(record.data)) for record in _store(size)]


@cache
def _targets() -> tuple[dict[str, Any], ...]:
    return tuple(
        target
        for path in sorted((DATA / "set" / "targets").glob("*.json"))
        for target in json.loads(path.read_text(encoding="utf-8"))
    )


@cache
def _store(size: int | None) -> tuple[StoreRecord, ...]:
    targets = [StoreRecord(t["collection"], t["title"], t["data"]) for t in _targets()]
    taken = {record.title for record in targets}
    specs = load("set/filler.json")
    share = 1.0 if size is None else (size - len(targets)) / sum(s["count"] for s in specs.values())
    rng = random.Random(SEED)
    made = list(targets)
    for name, spec in specs.items():
        made += _fill(name, spec, round(spec["count"] * share), rng, taken)
    return tuple(made)


def _fill(
    collection: str, spec: dict[str, Any], count: int, rng: random.Random, taken: set[str]
) -> list[StoreRecord]:
    """`count` records from the collection's templates, skipping titles already used."""
    made: list[StoreRecord] = []
    number = spec.get("first_number", 100)
    # A store larger than written may need more titles than the first templates can make.
    templates = spec["templates"] + spec.get("more_templates", [])[: count > spec["count"]]
    for _ in range(count * 20 + 1):
        if len(made) == count:
            return made
        template = rng.choice(templates)
        number += rng.randint(1, 7)
        chosen: dict[str, object] = {"n": number}
        for slot, values in spec["slots"].items():
            chosen[slot] = rng.choice(values)
        for slot, (low, high) in spec.get("numbers", {}).items():
            chosen[slot] = rng.randint(low, high)
        for slot in spec.get("dates", ()):
            chosen[slot] = (FIRST_DAY + timedelta(days=rng.randrange(DAYS))).isoformat()
        while "other_person" in chosen and chosen["other_person"] == chosen.get("person"):
            chosen["other_person"] = rng.choice(spec["slots"]["other_person"])  # two people
        title = str(_render(template["title"], chosen))
        if title not in taken:
            taken.add(title)
            made.append(StoreRecord(collection, title, _render(template["data"], chosen)))
    raise ValueError(f"{collection}: too few distinct titles for {count} records")


def _render(template: Any, chosen: dict[str, object]) -> Any:
    """Fill {slot}s; a string that is one slot alone keeps the slot's type (a number stays one)."""
    if isinstance(template, dict):
        return {key: _render(value, chosen) for key, value in template.items()}
    if isinstance(template, list):
        return [_render(value, chosen) for value in template]
    if isinstance(template, str):
        whole = SLOT.fullmatch(template)
        if whole:
            return chosen[whole.group(1)]
        return SLOT.sub(lambda match: str(chosen[match.group(1)]), template)
    return template
