"""Every title and alias in a scope, held in memory and matched with one rule on both backends.

The list for a scope (a collection, or the whole workspace) is cached per process and brought
up to date only when that scope's `names:` counter has moved, so a repeated resolution does not
reload it. A move is usually one write changing a few records: the records' current versions are
read (one narrow query) and only the records whose version changed, or that left the scope, are
replaced, rather than every name being read and indexed again. Every change to a record's title,
aliases or collection gives it a new version, and a new or removed record shows in that read
itself, so nothing can be missed; when much has changed, the list is rebuilt whole.
Similarity is the rule in `workflow.name_rule` (the Indel ratio, with differing words judged
one run at a time): a ranking heuristic, never evidence of identity.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from django.db import connection, transaction
from django.db.models import QuerySet
from rapidfuzz import fuzz, process

from records.counters import counter_values, names_key
from records.models import AuditEvent, Record, RecordAlias
from records.names import normalize_name
from workflow.name_rule import SIMILARITY_THRESHOLD, is_similar, ratio, what_differs

MIN_FUZZY_LENGTH = 3
MAX_SCOPE_RECORDS = 100_000
CACHED_SCOPES = 32
# Beyond this share of the scope changed (or this many names replaced and left behind as dead
# entries), building the list afresh costs less than patching it.
MAX_CHANGED_SHARE = 0.05
MAX_DEAD_SHARE = 0.2
PATCH_FLOOR = 100  # ... though a small scope may always have this many


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
    versions: dict[str, int] = field(default_factory=dict)  # record ID -> version loaded
    dead: frozenset[int] = frozenset()  # entries of records since replaced or gone

    def live_names(self) -> list[str]:
        if not self.dead:
            return self.names
        return [name for index, name in enumerate(self.names) if index not in self.dead]

    @property
    def too_large(self) -> bool:
        return self.record_count > MAX_SCOPE_RECORDS

    @classmethod
    def build(
        cls,
        revision: int,
        entries: list[tuple[str, str, bool]],
        record_count: int = 0,
        versions: dict[str, int] | None = None,
    ) -> ScopeNames:
        """From (record_id, title or alias, is_alias) triples, in bulk."""
        scope = cls(revision=revision, record_count=record_count, versions=versions or {})
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

    def patched(
        self,
        revision: int,
        *,
        stale: list[int],
        added: list[tuple[str, str, bool]],
        versions: dict[str, int],
    ) -> ScopeNames:
        """A new list (this one may be in use by another thread): entries `stale` dead, the
        `added` (record_id, name, is_alias) entries appended, the indexes kept to match."""
        scope = ScopeNames(
            revision=revision,
            record_ids=self.record_ids + [e[0] for e in added],
            displays=self.displays + [e[1] for e in added],
            is_alias=self.is_alias + [e[2] for e in added],
            names=self.names + [normalize_name(e[1]) for e in added],
            exact=dict(self.exact),
            words=dict(self.words),
            record_count=len(versions),
            versions=versions,
            dead=self.dead | frozenset(stale),
        )
        for index in stale:  # copied on write: the old list keeps its own
            name = scope.names[index]
            scope.exact[name] = [i for i in scope.exact[name] if i != index]
            if not scope.exact[name]:
                del scope.exact[name]
            for word in set(name.split()):
                scope.words[word] = scope.words[word] - {index}
                if not scope.words[word]:
                    del scope.words[word]
        for index in range(len(self.names), len(scope.names)):
            name = scope.names[index]
            scope.exact[name] = [*scope.exact.get(name, []), index]
            for word in set(name.split()):
                scope.words[word] = scope.words.get(word, set()) | {index}
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


def _in_scope(workspace_id: str, collection_id: str | None) -> tuple[QuerySet, QuerySet]:
    records = Record.objects.filter(workspace_id=workspace_id)
    aliases = RecordAlias.objects.filter(workspace_id=workspace_id)
    if collection_id:
        records = records.filter(collection_id=collection_id)
        aliases = aliases.filter(record__collection_id=collection_id)
    return records, aliases


def _load(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    scope = ScopeNames(revision=revision)
    records, aliases = _in_scope(workspace_id, collection_id)
    scope.record_count = records.count()
    if scope.too_large:
        return scope
    rows, versions = [], {}
    for record_id, title, version in records.values_list("id", "title", "version"):
        rows.append((record_id, title, False))
        versions[record_id] = version
    rows += [(r, a, True) for r, a in aliases.values_list("record_id", "alias")]
    return ScopeNames.build(revision, rows, scope.record_count, versions)


def _update(
    cached: ScopeNames, workspace_id: str, collection_id: str | None, revision: int
) -> ScopeNames:
    """`cached` brought to `revision`: the records whose version moved, or that are new or
    gone, replaced; the whole list reloaded when that is most of the work anyway."""
    records, aliases = _in_scope(workspace_id, collection_id)
    current = dict(records.values_list("id", "version"))
    if len(current) > MAX_SCOPE_RECORDS:
        return ScopeNames(revision=revision, record_count=len(current))
    changed = {rid for rid, version in current.items() if cached.versions.get(rid) != version}
    gone = cached.versions.keys() - current.keys()
    replaced = changed | gone
    limit = max(PATCH_FLOOR, int(MAX_CHANGED_SHARE * len(current)))
    if len(replaced) > limit or cached.too_large:
        return _load(workspace_id, collection_id, revision)
    if not replaced:  # the counter moved for a write that left these names as they were
        return replace(cached, revision=revision)
    stale = [
        index
        for index, rid in enumerate(cached.record_ids)
        if rid in replaced and index not in cached.dead
    ]
    if len(cached.dead) + len(stale) > max(PATCH_FLOOR, MAX_DEAD_SHARE * len(cached.names)):
        return _load(workspace_id, collection_id, revision)
    titles = list(records.filter(pk__in=changed).values_list("id", "title", "version"))
    added = [(rid, title, False) for rid, title, _ in titles]
    added += [
        (rid, alias, True)
        for rid, alias in aliases.filter(record_id__in=changed).values_list("record_id", "alias")
    ]
    return cached.patched(
        revision,
        stale=stale,
        added=added,
        versions={
            **{rid: v for rid, v in cached.versions.items() if rid not in replaced},
            **{rid: version for rid, _, version in titles},
        },
    )


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
    if cached is not None and cached.revision < revision:
        loaded = _update(cached, workspace_id, collection_id, revision)
    else:
        loaded = _load(workspace_id, collection_id, revision)
    with _lock:
        _cache[key] = loaded
        _cache.move_to_end(key)
        while len(_cache) > CACHED_SCOPES:
            _cache.popitem(last=False)
    return loaded


@dataclass
class OwnWrite:
    """A write this process makes, seen by the cached lists it may change.

    Only on SQLite: there a write transaction excludes every other writer from its first
    statement (BEGIN IMMEDIATE), so the names counters read at its start and at its end differ
    by this write alone. After it commits, a list that stood at the start takes the written
    records' new state and the end's revision: no scan. (On PostgreSQL another writer could
    move a counter between those reads, and the lists follow by scanning, as for any write.)
    """

    workspace_id: str
    before: dict[str, int]

    def written(self, action_id: str) -> None:
        """Inside the transaction, after the write: follow it once it commits."""
        after = counter_values(self.workspace_id, self.before)
        record_ids = set(
            AuditEvent.objects.filter(workspace_id=self.workspace_id, action_id=action_id)
            .exclude(record_id="")
            .values_list("record_id", flat=True)
        )
        if record_ids and after != self.before:
            transaction.on_commit(lambda: _follow(self, after, record_ids))


def follow_write(workspace_id: str) -> OwnWrite | None:
    """Call inside a write transaction, before it writes; see OwnWrite."""
    if connection.vendor != "sqlite":
        return None
    with _lock:
        scopes = [collection for ws, collection in _cache if ws == workspace_id]
    if not scopes:
        return None
    return OwnWrite(workspace_id, counter_values(workspace_id, map(names_key, scopes)))


def _follow(write: OwnWrite, after: dict[str, int], record_ids: set[str]) -> None:
    with _lock:
        scopes = [collection for ws, collection in _cache if ws == write.workspace_id]
    for collection_id in scopes:
        key = (write.workspace_id, collection_id)
        counter = names_key(collection_id)
        with _lock:
            cached = _cache.get(key)
        if cached is None or counter not in after or cached.revision != write.before[counter]:
            continue  # it moved on, or was loaded since: it follows by the counter as usual
        if after[counter] == cached.revision:
            continue  # nothing of this scope's names changed
        followed = _replace_records(
            cached, write.workspace_id, collection_id, after[counter], record_ids
        )
        if followed is None:
            continue
        with _lock:
            if _cache.get(key) is cached:
                _cache[key] = followed


def _replace_records(
    cached: ScopeNames,
    workspace_id: str,
    collection_id: str | None,
    revision: int,
    record_ids: set[str],
) -> ScopeNames | None:
    """`cached` with these records' names as they are now (in the scope or gone from it);
    None when a rebuild would serve better."""
    if cached.too_large:
        return None
    stale = [
        index
        for index, rid in enumerate(cached.record_ids)
        if rid in record_ids and index not in cached.dead
    ]
    if len(cached.dead) + len(stale) > max(PATCH_FLOOR, MAX_DEAD_SHARE * len(cached.names)):
        return None
    records, aliases = _in_scope(workspace_id, collection_id)
    titles = list(records.filter(pk__in=record_ids).values_list("id", "title", "version"))
    present = [rid for rid, _, _ in titles]
    added = [(rid, title, False) for rid, title, _ in titles]
    added += [
        (rid, alias, True)
        for rid, alias in aliases.filter(record_id__in=present).values_list("record_id", "alias")
    ]
    versions = {rid: v for rid, v in cached.versions.items() if rid not in record_ids}
    versions |= {rid: version for rid, _, version in titles}
    if len(versions) > MAX_SCOPE_RECORDS:
        return None
    return cached.patched(revision, stale=stale, added=added, versions=versions)


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
            if index in found or len(name) < MIN_FUZZY_LENGTH or index in names.dead:
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
