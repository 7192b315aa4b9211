"""Every title and alias in a scope, held in memory and matched with one rule on both backends.

The list for a scope (a collection, or the whole workspace) is cached per process and brought
up to date only when that scope's `names:` counter has moved, so a repeated resolution does not
reload it. A move is usually one write changing a few records: after this process's own commit
the written record IDs are handed over (no read at all of what the write did); otherwise the
records' current versions are read (one narrow query). Either way only the changed records'
entries are touched: their old entries are marked dead as of the new revision and their new
ones appended, in place, so a patch costs what the change costs, not what the list holds.
Every change to a record's title, aliases or collection gives it a new version, and a new or
removed record shows in that read itself, so nothing can be missed; when much has changed, the
list is rebuilt whole.
Similarity is the rule in `workflow.name_rule` (the Indel ratio, with differing words judged
one run at a time): a ranking heuristic, never evidence of identity.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import QuerySet
from rapidfuzz import fuzz, process

from records.counters import counter_values, names_key
from records.models import Record, RecordAlias
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
NEVER = 1 << 62  # the revision at which a live entry dies


@dataclass
class Entries:
    """The append-only store behind one scope's views; index i is one title or alias.

    Lists and indexes only ever grow: an entry replaced at revision R is recorded in `died`
    and stays in place, so a view taken before R (another thread may still be matching with
    it) reads what it read before. Only the newest view (`head`) may be patched, under `lock`.
    """

    record_ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    displays: list[str] = field(default_factory=list)
    is_alias: list[bool] = field(default_factory=list)
    exact: dict[str, list[int]] = field(default_factory=dict)
    words: dict[str, set[int]] = field(default_factory=dict)
    title_of: dict[str, int] = field(default_factory=dict)  # record ID -> its newest title
    aliases_of: dict[str, list[int]] = field(default_factory=dict)  # ... and its aliases
    died: dict[int, int] = field(default_factory=dict)  # entry index -> revision it died at
    versions: dict[str, int] = field(default_factory=dict)  # record ID -> version, at head
    head: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def append(self, entries: Iterable[tuple[str, str, bool]]) -> None:
        # Locals and get-then-create rather than setdefault: a load appends 100,000 entries
        # and this loop is most of its time.
        exact, words, title_of = self.exact, self.words, self.title_of
        index = len(self.names)
        added = list(entries)
        names = [normalize_name(display) for _, display, _ in added]
        for (record_id, _, alias), name in zip(added, names, strict=True):
            # Indexes first, lists last: a reader bounds itself by its view's length, never
            # by the lists', so a half-appended entry is invisible either way.
            same = exact.get(name)
            if same is None:
                exact[name] = [index]
            else:
                same.append(index)
            for word in name.split():
                holders = words.get(word)
                if holders is None:
                    words[word] = {index}
                else:
                    holders.add(index)
            if alias:
                self.aliases_of.setdefault(record_id, []).append(index)
            else:
                title_of[record_id] = index
            index += 1
        self.record_ids.extend(e[0] for e in added)
        self.displays.extend(e[1] for e in added)
        self.is_alias.extend(e[2] for e in added)
        self.names.extend(names)

    def of_record(self, record_id: str) -> list[int]:
        """The record's newest entries (older ones are dead already)."""
        title = self.title_of.get(record_id)
        return ([] if title is None else [title]) + self.aliases_of.get(record_id, [])


@dataclass
class ScopeNames:
    """One revision's view of a scope's names: the first `length` entries, less those dead
    by `revision`."""

    revision: int
    entries: Entries = field(default_factory=Entries)
    length: int = 0
    record_count: int = 0
    dead_count: int = 0

    @property
    def record_ids(self) -> list[str]:
        return self.entries.record_ids

    @property
    def displays(self) -> list[str]:
        return self.entries.displays

    @property
    def is_alias(self) -> list[bool]:
        return self.entries.is_alias

    @property
    def names(self) -> list[str]:
        """Every entry of this view, dead ones included (see is_live)."""
        names = self.entries.names
        return names if len(names) == self.length else names[: self.length]

    def is_live(self, index: int) -> bool:
        return index < self.length and self.entries.died.get(index, NEVER) > self.revision

    def live_indices(self) -> list[int]:
        died, revision = self.entries.died, self.revision
        return [i for i in range(self.length) if died.get(i, NEVER) > revision]

    def live_names(self) -> list[str]:
        if not self.dead_count:
            return self.names
        names = self.entries.names
        return [names[i] for i in self.live_indices()]

    def exact_indices(self, name: str) -> list[int]:
        return [i for i in self.entries.exact.get(name, ()) if self.is_live(i)]

    def word_indices(self, word: str) -> set[int]:
        # Copied first (one C call): another thread may be adding to the set.
        indices = set(self.entries.words.get(word, ()))
        return {i for i in indices if self.is_live(i)}

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
        store = Entries(versions=versions or {}, head=revision)
        # Hundreds of thousands of small objects are about to be created and none is garbage;
        # the cyclic collector would walk them repeatedly for nothing (a quarter of the time).
        collecting = gc.isenabled()
        gc.disable()
        try:
            store.append(entries)
        finally:
            if collecting:
                gc.enable()
        return cls(revision, store, len(store.names), record_count)

    def patched(
        self,
        revision: int,
        *,
        replaced: set[str],
        added: list[tuple[str, str, bool]],
        versions: dict[str, int],
    ) -> ScopeNames | None:
        """The next view: the entries of the `replaced` records dead, the `added` (record_id,
        name, is_alias) entries appended, `versions` (of the changed records; the others gone)
        recorded. Touches only those entries. None when this is no longer the newest view."""
        store = self.entries
        with store.lock:
            if store.head != self.revision or len(store.names) != self.length:
                return None
            stale = [
                index
                for rid in replaced
                for index in store.of_record(rid)
                if store.died.get(index, NEVER) > self.revision
            ]
            for rid in replaced:  # a record's entries die together: forget them
                store.title_of.pop(rid, None)
                store.aliases_of.pop(rid, None)
            for index in stale:
                store.died[index] = revision
            for rid in replaced:
                store.versions.pop(rid, None)
            store.versions.update(versions)
            store.append(added)
            store.head = revision
            return ScopeNames(
                revision,
                store,
                len(store.names),
                record_count=len(store.versions),
                dead_count=self.dead_count + len(stale),
            )

    def with_revision(self, revision: int) -> ScopeNames | None:
        """This view at a later revision that changed none of its names."""
        return self.patched(revision, replaced=set(), added=[], versions={})

    def would_pile_up(self, replaced: set[str]) -> bool:
        """Whether replacing these records leaves more dead entries than a rebuild costs."""
        of_record = self.entries.of_record
        stale = sum(1 for rid in replaced for i in of_record(rid) if self.is_live(i))
        return self.dead_count + stale > max(PATCH_FLOOR, MAX_DEAD_SHARE * self.length)


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
    records, aliases = _in_scope(workspace_id, collection_id)
    record_count = records.count()
    if record_count > MAX_SCOPE_RECORDS:
        return ScopeNames(revision=revision, record_count=record_count)
    rows, versions = [], {}
    for record_id, title, version in records.values_list("id", "title", "version"):
        rows.append((record_id, title, False))
        versions[record_id] = version
    rows += [(r, a, True) for r, a in aliases.values_list("record_id", "alias")]
    return ScopeNames.build(revision, rows, record_count, versions)


def _current_names(
    workspace_id: str, collection_id: str | None, record_ids: set[str]
) -> tuple[list[tuple[str, str, bool]], dict[str, int]]:
    """These records' entries and versions as they are now; a record gone from the scope has
    none."""
    records, aliases = _in_scope(workspace_id, collection_id)
    titles = list(records.filter(pk__in=record_ids).values_list("id", "title", "version"))
    added = [(rid, title, False) for rid, title, _ in titles]
    present = [rid for rid, _, _ in titles]
    added += [
        (rid, alias, True)
        for rid, alias in aliases.filter(record_id__in=present).values_list("record_id", "alias")
    ]
    return added, {rid: version for rid, _, version in titles}


def _update(
    cached: ScopeNames, workspace_id: str, collection_id: str | None, revision: int
) -> ScopeNames:
    """`cached` brought to `revision`: the records whose version moved, or that are new or
    gone, replaced; the whole list reloaded when that is most of the work anyway."""
    records, _ = _in_scope(workspace_id, collection_id)
    current = dict(records.values_list("id", "version"))
    if len(current) > MAX_SCOPE_RECORDS:
        return ScopeNames(revision=revision, record_count=len(current))
    known = cached.entries.versions
    changed = {rid for rid, version in current.items() if known.get(rid) != version}
    replaced = changed | (known.keys() - current.keys())
    limit = max(PATCH_FLOOR, int(MAX_CHANGED_SHARE * len(current)))
    if len(replaced) > limit or cached.too_large or cached.would_pile_up(replaced):
        return _load(workspace_id, collection_id, revision)
    if not replaced:  # the counter moved for a write that left these names as they were
        followed = cached.with_revision(revision)
    else:
        added, versions = _current_names(workspace_id, collection_id, changed)
        followed = cached.patched(revision, replaced=replaced, added=added, versions=versions)
    return followed or _load(workspace_id, collection_id, revision)


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

    def written(self, record_ids: set[str]) -> None:
        """Inside the transaction, after the write, with the IDs of the records it audited
        (`records.services.written_records`): follow it once it commits."""
        after = counter_values(self.workspace_id, self.before)
        if record_ids and after != self.before:
            transaction.on_commit(lambda: _follow(self, after, set(record_ids)))


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
    if cached.too_large or cached.would_pile_up(record_ids):
        return None
    added, versions = _current_names(workspace_id, collection_id, record_ids)
    grown = len(cached.entries.versions.keys() - record_ids) + len(versions)
    if grown > MAX_SCOPE_RECORDS:
        return None
    return cached.patched(revision, replaced=record_ids, added=added, versions=versions)


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

    for index in names.exact_indices(normalized_query):
        keep(index, 1.0, True, False)
    if len(normalized_query) >= MIN_FUZZY_LENGTH:
        all_names = names.names
        for _, score, index in process.extract(
            normalized_query,
            all_names,
            scorer=fuzz.ratio,
            processor=None,
            score_cutoff=SIMILARITY_THRESHOLD * 100,
            limit=None,
        ):
            name = all_names[index]
            # The three-character rule holds for both sides: "Alx" does not suggest "Al".
            if index in found or len(name) < MIN_FUZZY_LENGTH or not names.is_live(index):
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
        # One C call on the shared sets (nothing can add to them during it); the few hits are
        # then checked against this view.
        index_of = names.entries.words
        hits = set.intersection(*(index_of.get(w, set()) for w in words)) if words else set()
        padded = f" {normalized_query} "
        for index in hits:
            if not names.is_live(index):
                continue
            if index not in found and padded in f" {all_names[index]} ":
                keep(index, ratio(normalized_query, all_names[index]), False, True)
    return sorted(found.values(), key=lambda m: (not m.exact, -m.score, m.index))
