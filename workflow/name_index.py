"""Every title and alias in a scope, held in memory and matched with one rule on both backends.

A scope is a collection, or the whole workspace; its list is cached per process and checked
against the scope's `names:` counter on every use.

Invariants (tests/workflow/test_name_index_updates.py checks each):

- A view never runs ahead of its counter: the counter is read before the names, so a write
  racing a load leaves the view a revision behind (caught up on the next use), never ahead of
  what a ticket records.
- A view brought up to date holds exactly the live entries a fresh load at that revision holds,
  and matches every query as that load would: same exact, similar and whole-word matches.
- Catching up reads only what changed: the records named in the names log (records.name_log)
  between the view's revision and the counter's, and only their current names. The log proves
  its own completeness; when it cannot (a gap, or more than a patch is worth), the list is
  read whole instead, never guessed.
- Entries are append-only: a replaced record's entries are marked dead as of the new revision
  and stay in place, so a view another thread is still matching with reads what it read
  before. Only the newest view of a store is patched, under its lock, and a patch touches only
  the changed records' entries.
- A fresh process does not read every record: the list, once built from the records, is kept
  in the database (workflow.models.StoredNameList, one row) and the next process reads that row
  and the log since its revision. So the first resolution after a restart costs one row and
  the changes since it was stored, which is kept at most a patch's worth behind (a load that
  finds more rebuilds and stores it again). Storing a list prunes the names log up to its
  revision: a view behind that point finds a gap and reads the stored list instead. Only the
  names are split on reading (the matcher scans them all); the record IDs, displays and alias
  flags stay in their stored form and an entry is decoded when asked for, a display that is
  its name title-cased being stored empty (workflow.name_columns). A row that does not read
  back whole (another layout, or columns that disagree) is no row: the list is built and
  stored again.
- Lookups by exact name or whole words scan the list's names joined in one string (C-speed
  string search) for the stored part and use small indexes for entries appended since, so a
  list read from the database is ready to match at once, with no per-entry index to build.

Similarity is the rule in `workflow.name_rule` (the Indel ratio, with differing words judged
one run at a time): a ranking heuristic, never evidence of identity.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from rapidfuzz import fuzz, process

from records.counters import counter_values, names_key
from records.models import Record, RecordAlias
from records.name_log import names_written_now, prune_names_log
from records.names import normalize_name
from workflow.models import StoredNameList
from workflow.models.name_lists import NAME_LIST_LAYOUT
from workflow.name_columns import SEP, Flags, JoinedTexts, PackedIds
from workflow.name_rule import SIMILARITY_THRESHOLD, is_similar, ratio, what_differs
from workflow.stored_name_rows import read_stored

MIN_FUZZY_LENGTH = 3
MAX_SCOPE_RECORDS = 100_000
CACHED_SCOPES = 32
# Beyond this share of the scope changed (or this many names replaced and left behind as dead
# entries), building the list afresh costs less than patching it.
MAX_CHANGED_SHARE = 0.05
MAX_DEAD_SHARE = 0.2
PATCH_FLOOR = 100  # ... though a small scope may always have this many
NEVER = 1 << 62  # the revision at which a live entry dies
# Below this many records a scope reads from the records about as fast as from a stored list.
STORE_FROM_RECORDS = 2_000
# SEP (workflow.name_columns) is between entries in the joined names; normalized names never
# hold one (it is whitespace to str.split), and a list whose titles hold one is not stored.
FEW_RECORDS = 16  # found by scanning the record IDs, before the store builds its owner map
# Scans of every record ID (about 1.5 ms at 100,000 names) a store makes before it builds its
# owner map instead (about 50 ms once, then a patch touches only the changed entries): a server
# that keeps writing into a scope pays the map once, one that writes a few times never does.
SCANS_BEFORE_OWNERS = 8


@dataclass
class Entries:
    """The append-only store behind one scope's views; index i is one title or alias.

    Lists only ever grow: an entry replaced at revision R is recorded in `died` and stays in
    place, so a view taken before R (another thread may still be matching with it) reads what
    it read before. Only the newest view (`head`) may be patched, under `lock`.

    The first `base_count` names are also held joined in `base`, each between separators, and
    are found by string search; the entries appended after them by patches are indexed in
    `exact` and `words`.
    """

    record_ids: PackedIds = field(default_factory=PackedIds)
    names: list[str] = field(default_factory=list)
    displays: JoinedTexts = field(default_factory=JoinedTexts)
    is_alias: Flags = field(default_factory=Flags)
    base: str = SEP
    base_count: int = 0
    exact: dict[str, list[int]] = field(default_factory=dict)
    words: dict[str, set[int]] = field(default_factory=dict)
    # record ID (as record_ids.key gives it) -> its newest entries; built on the first patch
    # that needs more than a scan
    owners: dict[str, list[int]] | None = None
    died: dict[int, int] = field(default_factory=dict)  # entry index -> revision it died at
    head: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The last scan of_records made, and the state of the store it was made in: a patch asks
    # for the records' entries twice (would_pile_up, then patched), and a scan reads every ID.
    scanned: tuple[tuple[frozenset[str], int, int, int], dict[str, list[int]]] | None = None
    scans: int = 0  # scans of every record ID made so far (SCANS_BEFORE_OWNERS)

    def append(self, entries: Iterable[tuple[str, str, bool]]) -> None:
        exact, words, owners = self.exact, self.words, self.owners
        index = len(self.names)
        added = list(entries)
        names = [normalize_name(display) for _, display, _ in added]
        for (record_id, _, _), name in zip(added, names, strict=True):
            # Indexes first, lists last: a reader bounds itself by its view's length, never
            # by the lists', so a half-appended entry is invisible either way.
            exact.setdefault(name, []).append(index)
            for word in name.split():
                words.setdefault(word, set()).add(index)
            if owners is not None:
                owners.setdefault(self.record_ids.key(record_id), []).append(index)
            index += 1
        self.record_ids.extend(e[0] for e in added)
        self.displays.extend(e[1] for e in added)
        self.is_alias.extend(e[2] for e in added)
        self.names.extend(names)

    def of_records(self, record_ids: set[str]) -> dict[str, list[int]]:
        """Each record's newest entries (older ones are dead already); call under `lock`, or
        on a store no other thread has yet."""
        ids, died = self.record_ids, self.died
        if self.owners is None and (
            len(record_ids) > FEW_RECORDS or self.scans >= SCANS_BEFORE_OWNERS
        ):
            owners: dict[str, list[int]] = {}
            for index, key in enumerate(ids.keys()):
                if index not in died:
                    owners.setdefault(key, []).append(index)
            self.owners = owners
        found: dict[str, list[int]] = {}
        if self.owners is not None:
            for rid in record_ids:
                indices = self.owners.get(ids.key(rid))
                if indices is not None:
                    found[rid] = indices
            return found
        state = (frozenset(record_ids), len(self.names), len(died), self.head)
        if self.scanned is not None and self.scanned[0] == state:
            return {rid: list(indices) for rid, indices in self.scanned[1].items()}
        self.scans += 1
        for rid in record_ids:  # a string search of the IDs: the scan runs in C
            for index in ids.positions(rid):
                if index not in died:
                    found.setdefault(rid, []).append(index)
        self.scanned = (state, {rid: list(indices) for rid, indices in found.items()})
        return found

    def in_base(self, needle: str, *, whole_name: bool) -> Iterator[int]:
        """The stored part's entries equal to `needle` (whole_name) or holding it as whole
        words, by string search over `base`; dead entries included."""
        base = self.base
        if not needle or SEP in needle:
            return
        if whole_name:
            needle = f"{SEP}{needle}{SEP}"
        bounds = f" {SEP}"
        width = len(needle)
        index, counted = 0, 0
        position = base.find(needle)
        while position != -1:
            if whole_name or (base[position - 1] in bounds and base[position + width] in bounds):
                # Entry i begins after the (i+1)th separator: count them up to here.
                index += base.count(SEP, counted, position + (0 if whole_name else 1))
                counted = position + (0 if whole_name else 1)
                yield index if whole_name else index - 1
            position = base.find(needle, position + 1)


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
    def record_ids(self) -> PackedIds:
        return self.entries.record_ids

    @property
    def displays(self) -> JoinedTexts:
        return self.entries.displays

    @property
    def is_alias(self) -> Flags:
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
        store = self.entries
        found = list(store.in_base(name, whole_name=True))
        found += store.exact.get(name, ())
        return [i for i in found if self.is_live(i)]

    def word_hits(self, query: str) -> list[int]:
        """Live entries holding every word of `query` as whole words, in its order
        ("rahul" in "rahul sharma")."""
        store = self.entries
        found = set(store.in_base(query, whole_name=False))
        words = query.split()
        # Copied first (one C call each): another thread may be adding to the sets.
        tail = set.intersection(*(set(store.words.get(w, ())) for w in words)) if words else set()
        padded = f" {query} "
        names = store.names
        found |= {i for i in tail if padded in f" {names[i]} "}
        return sorted(i for i in found if self.is_live(i))

    @property
    def too_large(self) -> bool:
        return self.record_count > MAX_SCOPE_RECORDS

    @classmethod
    def build(cls, revision: int, entries: list[tuple[str, str, bool]]) -> ScopeNames:
        """From (record_id, title or alias, is_alias) triples, in bulk."""
        names = [normalize_name(display) for _, display, _ in entries]
        return cls._of(
            revision,
            PackedIds(tail=[e[0] for e in entries]),
            names,
            JoinedTexts(tail=[e[1] for e in entries]),
            Flags(tail=[e[2] for e in entries]),
        )

    @classmethod
    def _of(
        cls,
        revision: int,
        record_ids: PackedIds,
        names: list[str],
        displays: JoinedTexts,
        is_alias: Flags,
        joined_names: str | None = None,
    ) -> ScopeNames:
        """`joined_names`: `names` already joined by SEP (as stored), to copy instead of join."""
        if joined_names is None:
            joined_names = SEP.join(names)
        store = Entries(
            record_ids,
            names,
            displays,
            is_alias,
            base=f"{SEP}{joined_names}{SEP}",
            base_count=len(names),
            head=revision,
        )
        return cls(revision, store, len(names), record_count=is_alias.count(False))

    @classmethod
    def from_stored(cls, stored: StoredNameList) -> ScopeNames | None:
        """The list as `stored_form` kept it: one split (the names), the other columns read as
        they are; None when the row does not read back whole (another layout, or columns that
        disagree on the number of entries), so that the caller builds the list again."""
        if stored.layout != NAME_LIST_LAYOUT:
            return None
        count = len(stored.aliases)
        names = stored.names.split(SEP) if count else []
        if len(names) != count:
            return None
        displays = JoinedTexts.read(stored.displays, count, bytes(stored.display_marks), names)
        try:
            record_ids = PackedIds(bytes(stored.record_ids))
        except ValueError:
            return None
        if len(record_ids) != count or displays is None or stored.aliases.strip("01"):
            return None
        return cls._of(
            stored.revision,
            record_ids,
            names,
            displays,
            Flags(stored.aliases),
            joined_names=stored.names if count else "",
        )

    def stored_form(self) -> dict[str, Any] | None:
        """The columns of a StoredNameList for this view, or None when one cannot hold it (a
        view with dead entries, a name or display holding the separator, or a record ID that
        is not a canonical UUID)."""
        if self.dead_count or self.length != len(self.entries.names):
            return None
        store = self.entries
        names = SEP.join(store.names)
        if names.count(SEP) != max(0, self.length - 1):
            return None
        record_ids = store.record_ids.pack()
        displays = store.displays.joined_form(store.names)
        if record_ids is None or displays is None:
            return None
        return {
            "layout": NAME_LIST_LAYOUT,
            "record_ids": record_ids,
            "names": names,
            "displays": displays[0],
            "display_marks": displays[1],
            "aliases": store.is_alias.stored_form(),
        }

    def patched(
        self,
        revision: int,
        *,
        replaced: set[str],
        added: list[tuple[str, str, bool]],
    ) -> ScopeNames | None:
        """The next view: the entries of the `replaced` records dead, the `added` (record_id,
        name, is_alias) entries (of replaced records, as they are now) appended. Touches only
        those entries. None when this is no longer the newest view."""
        store = self.entries
        with store.lock:
            if store.head != self.revision or len(store.names) != self.length:
                return None
            owned = store.of_records(replaced) if replaced else {}
            stale = [i for indices in owned.values() for i in indices if self.is_live(i)]
            present = sum(
                1 for indices in owned.values() if not all(store.is_alias[i] for i in indices)
            )
            if store.owners is not None:
                for rid in replaced:  # a record's entries die together: forget them
                    store.owners.pop(store.record_ids.key(rid), None)
            for index in stale:
                store.died[index] = revision
            store.append(added)
            store.head = revision
            titles = sum(1 for _, _, alias in added if not alias)
            return ScopeNames(
                revision,
                store,
                len(store.names),
                record_count=self.record_count - present + titles,
                dead_count=self.dead_count + len(stale),
            )

    def with_revision(self, revision: int) -> ScopeNames | None:
        """This view at a later revision that changed none of its names."""
        return self.patched(revision, replaced=set(), added=[])

    def would_pile_up(self, replaced: set[str]) -> bool:
        """Whether replacing these records leaves more dead entries than a rebuild costs."""
        store = self.entries
        with store.lock:
            owned = store.of_records(replaced) if replaced else {}
        stale = sum(1 for indices in owned.values() for i in indices if self.is_live(i))
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


def _patch_limit(record_count: int) -> int:
    return max(PATCH_FLOOR, int(MAX_CHANGED_SHARE * record_count))


def _load(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    """Every name of the scope, read from the records."""
    records, aliases = _in_scope(workspace_id, collection_id)
    record_count = records.count()
    if record_count > MAX_SCOPE_RECORDS:
        return ScopeNames(revision=revision, record_count=record_count)
    rows = [(record_id, title, False) for record_id, title in records.values_list("id", "title")]
    rows += [(r, a, True) for r, a in aliases.values_list("record_id", "alias")]
    return ScopeNames.build(revision, rows)


def _store(workspace_id: str, collection_id: str | None, names: ScopeNames) -> None:
    """Keep the list for the next process to start; a rival writer's list serves as well.

    The names log up to the list's revision is pruned with it: no reader needs those rows (one
    behind the list finds a gap and reads the stored list), so the log stays as long as the
    changes since the last store, not the scope's whole history.
    """
    columns = names.stored_form()
    if columns is None or names.too_large or names.record_count < STORE_FROM_RECORDS:
        return
    key = names_key(collection_id)
    try:
        with transaction.atomic():
            StoredNameList.objects.update_or_create(
                workspace_id=workspace_id,
                scope_key=key,
                defaults={"revision": names.revision, **columns},
            )
            prune_names_log(workspace_id, key, names.revision)
    except IntegrityError:  # another process stored one at the same moment
        pass


def _fresh(workspace_id: str, collection_id: str | None, revision: int) -> ScopeNames:
    """The scope at `revision` with nothing cached: the stored list and the changes since it
    when there is one close enough, else every name read from the records (and stored)."""
    key = names_key(collection_id)
    stored = read_stored(workspace_id, key)
    view = None if stored is None else ScopeNames.from_stored(stored)
    if view is not None:
        if view.revision >= revision:  # stored after our counter read: newer is as good
            return view
        followed = _follow_log(view, workspace_id, collection_id, revision)
        if followed is not None:
            return followed
    loaded = _load(workspace_id, collection_id, revision)
    _store(workspace_id, collection_id, loaded)
    return loaded


def _follow_log(
    cached: ScopeNames, workspace_id: str, collection_id: str | None, revision: int
) -> ScopeNames | None:
    """`cached` brought to `revision` from the names log; None when the log cannot say what
    changed, or so much did that reading the list afresh serves better."""
    if cached.too_large:
        return None
    limit = _patch_limit(cached.record_count)
    # A rename moves a collection's counter twice (old and new collection), so twice the moves.
    written = names_written_now(
        workspace_id,
        collection_id,
        names_key(collection_id),
        cached.revision,
        revision,
        limit=2 * limit,
    )
    if written is None or len(written[0]) > limit:
        return None
    changed, added = written
    if not changed:
        return cached.with_revision(revision)
    return _replace_records(cached, revision, changed, added)


def _current_names(
    workspace_id: str, collection_id: str | None, record_ids: set[str]
) -> list[tuple[str, str, bool]]:
    """These records' entries as they are now; a record gone from the scope has none."""
    records, aliases = _in_scope(workspace_id, collection_id)
    titles = list(records.filter(pk__in=record_ids).values_list("id", "title"))
    added = [(rid, title, False) for rid, title in titles]
    present = [rid for rid, _ in titles]
    added += [
        (rid, alias, True)
        for rid, alias in aliases.filter(record_id__in=present).values_list("record_id", "alias")
    ]
    return added


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
        if cached is not None and cached.revision >= revision:
            _cache.move_to_end(key)
            return cached
    loaded = None
    if cached is not None:
        loaded = _follow_log(cached, workspace_id, collection_id, revision)
    if loaded is None:
        loaded = _fresh(workspace_id, collection_id, revision)
    with _lock:
        _cache[key] = loaded
        _cache.move_to_end(key)
        while len(_cache) > CACHED_SCOPES:
            _cache.popitem(last=False)
    return loaded


def scope_record_count(workspace_id: str, collection_id: str | None) -> int:
    """How many records the scope holds now, as a load counts them (see ScopeNames.too_large)."""
    records, _ = _in_scope(workspace_id, collection_id)
    return records.count()


def names_of(workspace_id: str, collection_id: str | None, record_ids: set[str]) -> ScopeNames:
    """A view of just these records' current names in the scope, to match a query against
    what changed (workflow.freshness) without the scope's whole list."""
    return ScopeNames.build(0, _current_names(workspace_id, collection_id, record_ids))


@dataclass
class OwnWrite:
    """A write this process makes, seen by the cached lists it may change.

    Only on SQLite: there a write transaction excludes every other writer from its first
    statement (BEGIN IMMEDIATE), so the names counters read at its start and at its end differ
    by this write alone. After it commits, a list that stood at the start takes the written
    records' new state and the end's revision: no read of the log. (On PostgreSQL another writer
    could move a counter between those reads, and the lists follow the log, as for any write.)
    """

    workspace_id: str
    before: dict[str, int]

    def written(self, record_ids: set[str]) -> None:
        """Inside the transaction, after the write, with the IDs of the records it audited
        (`records.services.written_records`): follow it once it commits."""
        after = counter_values(self.workspace_id, self.before)
        if record_ids and after != self.before:
            transaction.on_commit(lambda: _follow(self, after, set(record_ids)))


def follow_write(workspace_id: str, locked: dict[str, int] | None = None) -> OwnWrite | None:
    """Call inside a write transaction, before it writes; see OwnWrite. `locked`: counters
    this transaction has already read (locked), whose values need no second read."""
    if connection.vendor != "sqlite":
        return None
    with _lock:
        scopes = [collection for ws, collection in _cache if ws == workspace_id]
    if not scopes:
        return None
    keys = [names_key(collection) for collection in scopes]
    known = {key: (locked or {})[key] for key in keys if key in (locked or {})}
    unread = [key for key in keys if key not in known]
    before = {**(counter_values(workspace_id, unread) if unread else {}), **known}
    return OwnWrite(workspace_id, before)


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
        if cached.too_large or cached.would_pile_up(record_ids):
            continue
        added = _current_names(write.workspace_id, collection_id, record_ids)
        followed = _replace_records(cached, after[counter], record_ids, added)
        if followed is None:
            continue
        with _lock:
            if _cache.get(key) is cached:
                _cache[key] = followed


def _replace_records(
    cached: ScopeNames,
    revision: int,
    record_ids: set[str],
    added: list[tuple[str, str, bool]],
) -> ScopeNames | None:
    """`cached` with these records' names as they are now (`added`: their entries in the scope,
    none for a record gone from it); None when a rebuild would serve better."""
    if cached.too_large or cached.would_pile_up(record_ids):
        return None
    followed = cached.patched(revision, replaced=record_ids, added=added)
    if followed is None or followed.too_large:
        return None
    return followed


def clear_cache() -> None:
    with _lock:
        _cache.clear()


# Scores held at once by match_names_many (float64): about 8 MB, whatever the scope's size.
MANY_SCORES_AT_ONCE = 1_000_000


def _similar_spellings(names: ScopeNames, normalized_query: str) -> Iterator[tuple[float, int]]:
    """(score 0-100, index) of every entry whose character ratio reaches the threshold."""
    for _, score, index in process.extract(
        normalized_query,
        names.names,
        scorer=fuzz.ratio,
        processor=None,
        score_cutoff=SIMILARITY_THRESHOLD * 100,
        limit=None,
    ):
        yield score, index


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
        spellings = _similar_spellings(names, normalized_query) if similar is None else similar
        for score, index in spellings:
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
        for index in names.word_hits(normalized_query):
            if index not in found:
                keep(index, ratio(normalized_query, all_names[index]), False, True)
    return sorted(found.values(), key=lambda m: (not m.exact, -m.score, m.index))
