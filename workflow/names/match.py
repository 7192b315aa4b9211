"""Matching a query against a snapshot: exact names, similar spellings, whole words."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from workflow.names.rule import SIMILARITY_THRESHOLD, is_similar, ratio, what_differs
from workflow.names.view import ScopeNames

MIN_FUZZY_LENGTH = 3


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


# Scores held at once by match_names_many (float64): about 8 MB, whatever the scope's size.
MANY_SCORES_AT_ONCE = 1_000_000


def match_names_many(names: ScopeNames, queries: list[tuple[str, str]]) -> list[list[NameMatch]]:
    """match_names of each (normalized, shown) query against one view.

    The similar-spelling scan of all the queries is one rapidfuzz cdist call per block of
    queries (its vectorised ratio is several times faster than one extract per query), with
    the same scorer, cutoff and float64 scores, so each answer is exactly match_names's.
    """
    import numpy as np

    all_names = names.names
    fuzzy = [i for i, (normalized, _) in enumerate(queries) if len(normalized) >= MIN_FUZZY_LENGTH]
    similar: dict[int, list[tuple[float, int]]] = {i: [] for i in fuzzy}
    block = max(1, MANY_SCORES_AT_ONCE // max(1, len(all_names)))
    for start in range(0, len(fuzzy) if all_names else 0, block):
        rows = fuzzy[start : start + block]
        scores = process.cdist(
            [queries[i][0] for i in rows],
            all_names,
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=SIMILARITY_THRESHOLD * 100,
            dtype=np.float64,
        )
        for row, query_index in zip(scores, rows, strict=True):
            hits = np.flatnonzero(row)
            similar[query_index] = list(zip(row[hits].tolist(), hits.tolist(), strict=True))
    return [
        match_names(names, normalized, shown, similar=similar.get(i, []))
        for i, (normalized, shown) in enumerate(queries)
    ]


def match_names(
    names: ScopeNames,
    normalized_query: str,
    shown_query: str | None = None,
    *,
    similar: Iterable[tuple[float, int]] | None = None,
) -> list[NameMatch]:
    """Exact matches, then similar spellings and whole-word matches (names of 3+ chars).

    `shown_query` is the query as typed, for the "differs:" note of a similar spelling.
    `similar`: the entries reaching the character-ratio threshold, when the caller scanned
    for them already (match_names_many).
    """
    found: dict[int, NameMatch] = {}

    def keep(index: int, score: float, exact: bool, word: bool, differs: str = "") -> None:
        # Each entry is kept once: a later kind of match skips an entry already found.
        record_id, display, is_alias = names.entry(index)
        found[index] = NameMatch(index, record_id, display, is_alias, score, exact, word, differs)

    for index in names.exact_indices(normalized_query):
        keep(index, 1.0, True, False)
    if len(normalized_query) >= MIN_FUZZY_LENGTH:
        all_names = names.names
        if similar is None:  # (score 0-100, index) of every entry reaching the threshold
            found_by = process.extract(
                normalized_query,
                all_names,
                scorer=fuzz.ratio,
                processor=None,
                score_cutoff=SIMILARITY_THRESHOLD * 100,
                limit=None,
            )
            similar = [(score, index) for _, score, index in found_by]
        for score, index in similar:
            name = all_names[index]
            # The three-character rule holds for both sides: "Alx" does not suggest "Al".
            if index in found or len(name) < MIN_FUZZY_LENGTH or index in names.dead:
                continue
            # A template with another person or number in it is another name, not a typo.
            if not is_similar(normalized_query, name, score / 100.0):
                continue
            display = names.entry(index)[1]
            differs = what_differs(shown_query or normalized_query, display, normalized_query, name)
            keep(index, score / 100.0, False, False, differs)
        # "Rahul" should surface "Rahul Sharma": every query word is a word of the name.
        for index in names.word_hits(normalized_query):
            if index not in found:
                keep(index, ratio(normalized_query, all_names[index]), False, True)
    return sorted(found.values(), key=lambda m: (not m.exact, -m.score, m.index))
