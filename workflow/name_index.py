"""Every title and alias in a scope, held in memory and matched with one rule on both backends.

The list for a scope (a collection, or the whole workspace) is cached per process and rebuilt
only when that scope's `names:` counter has moved, so a repeated resolution does not reload it.
Similarity is the rule in `workflow.name_rule` (the Indel ratio, with differing words judged
one run at a time): a ranking heuristic, never evidence of identity.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from records.counters import counter_values, names_key
from records.models import Record, RecordAlias
from records.names import normalize_name
from workflow.name_rule import SIMILARITY_THRESHOLD, is_similar, ratio, what_differs

MIN_FUZZY_LENGTH = 3
MAX_SCOPE_RECORDS = 100_000
CACHED_SCOPES = 32


@dataclass
class ScopeNames:
    """Parallel lists of names; index i is one title or alias of record_ids[i]."""

    revision: int
    record_ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    displays: list[str] = field(default_factory=list)
    is_alias: list[bool] = field(default_factory=list)
    exact: dict[str, list[int]] = field(default_factory=dict)
    words: dict[str, set[int]] = field(default_factory=dict)
    record_count: int = 0

    @property
    def too_large(self) -> bool:
        return self.record_count > MAX_SCOPE_RECORDS

    @classmethod
    def build(
        cls, revision: int, entries: list[tuple[str, str, bool]], record_count: int = 0
    ) -> ScopeNames:
        """From (record_id, title or alias, is_alias) triples, in bulk."""
        scope = cls(revision=revision, record_count=record_count)
        # Hundreds of thousands of small objects are about to be created and none is garbage;
        # the cyclic collector would walk them repeatedly for nothing (a quarter of the time).
        collecting = gc.isenabled()
        gc.disable()
        try:
            scope.record_ids = [e[0] for e in entries]
            scope.displays = [e[1] for e in entries]
            scope.is_alias = [e[2] for e in entries]
            scope.names = [normalize_name(d) for d in scope.displays]
            for index, name in enumerate(scope.names):
                scope.exact.setdefault(name, []).append(index)
                for word in name.split():
                    scope.words.setdefault(word, set()).add(index)
        finally:
            if collecting:
                gc.enable()
        return scope


@dataclass(frozen=True)
class NameMatch:
    index: int
    record_id: str
    display: str
    is_alias: bool
    score: float
    exact: bool
    word_match: bool
    differs: str = ""  # for a similar spelling: "differs: Kriat / Kirat"


_cache: OrderedDict[tuple[str, str | None], ScopeNames] = OrderedDict()
_lock = threading.Lock()


def _load(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    scope = ScopeNames(revision=revision)
    records = Record.objects.filter(workspace_id=workspace_id)
    aliases = RecordAlias.objects.filter(workspace_id=workspace_id)
    if collection_id:
        records = records.filter(collection_id=collection_id)
        aliases = aliases.filter(record__collection_id=collection_id)
    scope.record_count = records.count()
    if scope.too_large:
        return scope
    rows = [(r, t, False) for r, t in records.values_list("id", "title")]
    rows += [(r, a, True) for r, a in aliases.values_list("record_id", "alias")]
    return ScopeNames.build(revision, rows, scope.record_count)


def scope_names(workspace_id: str, collection_id: str | None) -> ScopeNames:
    """The scope's names, from cache when its names counter has not moved.

    The counter is read before the names: a write racing the load leaves the cache one
    revision behind (it is reloaded next time), never ahead of the counter a ticket records.
    """
    key = (workspace_id, collection_id)
    counter = names_key(collection_id)
    revision = counter_values(workspace_id, [counter])[counter]
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.revision == revision:
            _cache.move_to_end(key)
            return cached
    loaded = _load(workspace_id, collection_id, revision)
    with _lock:
        _cache[key] = loaded
        _cache.move_to_end(key)
        while len(_cache) > CACHED_SCOPES:
            _cache.popitem(last=False)
    return loaded


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def match_names(
    names: ScopeNames, normalized_query: str, shown_query: str | None = None
) -> list[NameMatch]:
    """Exact matches, then similar spellings and whole-word matches (names of 3+ chars).

    `shown_query` is the query as typed, for the "differs:" note of a similar spelling.
    """
    found: dict[int, NameMatch] = {}

    def keep(index: int, score: float, exact: bool, word: bool, differs: str = "") -> None:
        previous = found.get(index)
        if previous is None or score > previous.score:
            found[index] = NameMatch(
                index,
                names.record_ids[index],
                names.displays[index],
                names.is_alias[index],
                score,
                exact,
                word,
                differs,
            )

    for index in names.exact.get(normalized_query, []):
        keep(index, 1.0, True, False)
    if len(normalized_query) >= MIN_FUZZY_LENGTH:
        for _, score, index in process.extract(
            normalized_query,
            names.names,
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=SIMILARITY_THRESHOLD * 100,
            limit=None,
        ):
            name = names.names[index]
            # The three-character rule holds for both sides: "Alx" does not suggest "Al".
            if index in found or len(name) < MIN_FUZZY_LENGTH:
                continue
            # A template with another person or number in it is another name, not a typo.
            if not is_similar(normalized_query, name, score / 100.0):
                continue
            differs = what_differs(
                shown_query or normalized_query, names.displays[index], normalized_query, name
            )
            keep(index, score / 100.0, False, False, differs)
        # "Rahul" should surface "Rahul Sharma": every query word is a word of the name.
        words = normalized_query.split()
        hits = set.intersection(*(names.words.get(w, set()) for w in words)) if words else set()
        padded = f" {normalized_query} "
        for index in hits:
            if index not in found and padded in f" {names.names[index]} ":
                keep(index, ratio(normalized_query, names.names[index]), False, True)
    return sorted(found.values(), key=lambda m: (not m.exact, -m.score, m.index))
