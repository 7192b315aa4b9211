"""A labelled set for recall by meaning: a team's memory, and questions asked in other words.

The store looks like what a coding team keeps: decisions, incidents, people, expenses, tickets,
meeting notes, services and vendors. A few hundred target records are written out by hand
(meaning_set_data/targets/*.json); several thousand filler records are templated from
vocabularies (meaning_set_data/filler.json) with a seeded random.Random, so each target has to
be found among plausible distractors of the same shape.

Each target carries the questions that should find it. `other_words` questions are phrased as
a person would ask an agent, in their own words: they share no content word with the target's
title or values (see `shared_words`: lowercased, stop words dropped, plurals, -ing and -ed
folded, and a word of four letters or more counts as shared when it begins the other, as a
full-text prefix match would). `same_words` questions are made of the target's own words
(each begins a word of the record, as `matches_every_word` checks, so a full-text search that
needs every word finds it), to show that a search by meaning does not harm a search by words.
A question's expected titles are the records that should be on the first page (the top 10).

A target file is a list of {collection, title, data, ask, same, also}: `ask` holds its
other-words questions, `same` its same-words ones, and `also` names other targets that answer
them as well (a decision and the ticket that carries it out).
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

DATA = Path(__file__).with_name("meaning_set_data")
SEED = 32
FIRST_DAY = date(2025, 1, 6)
DAYS = 600
PREFIX_MIN = 4
WORD = re.compile(r"[^\W_]+")
SLOT = re.compile(r"\{(\w+)\}")

# Function words and the filler of a question ("can you find..."): they carry no topic.
_STOP_WORDS = """
    a about above after again against all am an and any anyone anything are as at be been
    before being below between both but by can could did do does doing done down during each
    else ever few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just let me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own please same she should
    so some something still such than that the their theirs them themselves then there these
    they this those through to too under until up us very was we were what when where which
    while who whom whose why will with would you your yours yourself yourselves one ones
    anybody someone somebody thing things tell show find remind know look looking need
    s t d ll re ve m don doesn didn isn aren wasn weren couldn wouldn shouldn won haven hasn
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

Kind = Literal["other_words", "same_words"]


@dataclass(frozen=True)
class StoreRecord:
    collection: str
    title: str
    data: dict[str, object]


@dataclass(frozen=True)
class LabelledQuery:
    text: str
    expected: tuple[str, ...]
    kind: Kind


def stem(word: str) -> str:
    """Fold plurals, -ing and -ed, and a final e, so decide, decides and deciding are one."""
    word = word.lower().removesuffix("'s")
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith(("ed", "es")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The lowercased words of `text` that carry its topic (stop words dropped)."""
    return {word for word in WORD.findall(text.lower()) if word not in STOP_WORDS}


def record_text(record: StoreRecord) -> str:
    """What a words search reads: the title and every string or number value in the data."""
    parts = [record.title]
    _collect_values(record.data, parts)
    return " ".join(parts)


def _collect_values(value: object, parts: list[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _collect_values(item, parts)
    elif isinstance(value, list):
        for item in value:
            _collect_values(item, parts)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        parts.append(str(value))


def _same(query_word: str, record_word: str) -> bool:
    if stem(query_word) == stem(record_word):
        return True
    shorter, longer = sorted((query_word, record_word), key=len)
    return len(shorter) >= PREFIX_MIN and longer.startswith(shorter)


def shared_words(query: str, record: StoreRecord) -> set[str]:
    """The query's content words that also appear in the record, by the rule above."""
    record_words = content_words(record_text(record))
    return {
        word for word in content_words(query) if any(_same(word, other) for other in record_words)
    }


def matches_every_word(query: str, record: StoreRecord) -> bool:
    """Whether each word of the query begins a word of the record, as full-text search needs."""
    record_words = WORD.findall(record_text(record).lower())
    return all(
        any(other.startswith(word) for other in record_words)
        for word in WORD.findall(query.lower())
    )


def collections() -> dict[str, str]:
    """Collection name -> what it holds."""
    return dict(_load("collections.json"))


def store() -> list[StoreRecord]:
    """Targets and filler, in a fixed order: the same list on every call.

    Each call gets its own copy of the data, so a caller that edits a record's values (as a
    benchmark might, to test updates) cannot change what the next caller reads.
    """
    return [replace(record, data=copy.deepcopy(record.data)) for record in _store()]


def queries() -> list[LabelledQuery]:
    """Every labelled question, in the order the targets are written."""
    found: list[LabelledQuery] = []
    for target in _targets():
        expected = (target["title"], *target.get("also", ()))
        found += [LabelledQuery(text, expected, "other_words") for text in target.get("ask", ())]
        found += [LabelledQuery(text, expected, "same_words") for text in target.get("same", ())]
    return found


@cache
def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@cache
def _targets() -> tuple[dict[str, Any], ...]:
    return tuple(
        target
        for path in sorted((DATA / "targets").glob("*.json"))
        for target in json.loads(path.read_text(encoding="utf-8"))
    )


@cache
def _store() -> tuple[StoreRecord, ...]:
    targets = [StoreRecord(t["collection"], t["title"], t["data"]) for t in _targets()]
    taken = {record.title for record in targets}
    filler: list[StoreRecord] = []
    rng = random.Random(SEED)
    for name, spec in _load("filler.json").items():
        filler += _fill(name, spec, rng, taken)
    return tuple(targets + filler)


def _fill(
    collection: str, spec: dict[str, Any], rng: random.Random, taken: set[str]
) -> list[StoreRecord]:
    """`spec["count"]` records from the collection's templates, skipping titles already used."""
    made: list[StoreRecord] = []
    number = spec.get("first_number", 100)
    attempts = 0
    while len(made) < spec["count"]:
        attempts += 1
        if attempts > spec["count"] * 20:
            raise ValueError(f"{collection}: too few distinct titles for {spec['count']} records")
        template = rng.choice(spec["templates"])
        number += rng.randint(1, 7)
        chosen: dict[str, object] = {"n": number}
        for slot, values in spec["slots"].items():
            chosen[slot] = rng.choice(values)
        for slot, (low, high) in spec.get("numbers", {}).items():
            chosen[slot] = rng.randint(low, high)
        for slot in spec.get("dates", ()):
            chosen[slot] = (FIRST_DAY + timedelta(days=rng.randrange(DAYS))).isoformat()
        if "other_person" in chosen:
            # Two people named in one record are never the same person.
            while chosen["other_person"] == chosen.get("person"):
                chosen["other_person"] = rng.choice(spec["slots"]["other_person"])
        title = str(_render(template["title"], chosen))
        if title in taken:
            continue
        taken.add(title)
        data = _render(template["data"], chosen)
        assert isinstance(data, dict)
        made.append(StoreRecord(collection, title, data))
    return made


def _render(template: object, chosen: dict[str, object]) -> object:
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
