"""One revision of a scope's names: an immutable snapshot (the model is in workflow.names).

A snapshot is a shared base (names joined in one string for C-speed exact and whole-word finds,
record IDs packed 16 bytes each, displays held empty where the name title-cased gives them) plus
two small parts of its own: the base entries of records replaced since (`dead`) and the entries
written since (`tail`). A patch copies only those small parts.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from records.names import normalize_name
from workflow.models import StoredNameList
from workflow.models.name_lists import NAME_LIST_LAYOUT

SEP = "\x1f"  # between joined entries: whitespace to str.split, so no normalized name holds one
ID_WIDTH = 16
MAX_SCOPE_RECORDS = 100_000
# Replaced and appended entries a snapshot carries beside its base before a fresh read costs
# less: a share of the base, though a small scope may always have PATCH_FLOOR.
MAX_PATCHED_SHARE = 0.2
PATCH_FLOOR = 100
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

Entry = tuple[str, str, bool]  # (record_id, title or alias as written, is_alias)


def _pack(record_ids: list[str]) -> bytes | None:
    """16 bytes an ID, or None when one is not a canonical (lower-case) UUID."""
    if not all(_CANONICAL.fullmatch(rid) for rid in record_ids):
        return None
    return bytes.fromhex("".join(record_ids).replace("-", ""))


@dataclass(frozen=True)
class Base:
    """The entries a snapshot was built or read with, shared by the snapshots patched from it."""

    names: list[str]  # normalized
    ids: bytes | list[str]  # 16 UUID bytes an entry, or the IDs as text when one is no UUID
    displays: list[str]  # "" where the display is its name title-cased
    aliases: str  # "1" for an alias, "0" for a title, one character an entry
    joined: str  # SEP, then each name followed by SEP: exact and word lookups are C-speed finds

    def record_id(self, index: int) -> str:
        if isinstance(self.ids, list):
            return self.ids[index]
        return str(uuid.UUID(bytes=self.ids[index * ID_WIDTH : (index + 1) * ID_WIDTH]))

    def positions(self, record_id: str) -> Iterator[int]:
        """This record's entries: a search of the packed IDs, in C."""
        if isinstance(self.ids, list):
            yield from (i for i, rid in enumerate(self.ids) if rid == record_id)
        elif _CANONICAL.fullmatch(record_id):
            needle, packed = uuid.UUID(record_id).bytes, self.ids
            at = packed.find(needle)
            while at != -1:
                if at % ID_WIDTH == 0:  # not a run straddling two IDs
                    yield at // ID_WIDTH
                at = packed.find(needle, at + 1)


def _found(joined: str, needle: str, *, whole_name: bool, offset: int = 0) -> Iterator[int]:
    """Entries of `joined` equal to `needle` (whole_name) or holding it as whole words."""
    if not needle or SEP in needle:
        return
    if whole_name:
        needle = f"{SEP}{needle}{SEP}"
    bounds, width, index, counted = f" {SEP}", len(needle), offset - 1, 0
    at = joined.find(needle)
    while at != -1:
        if whole_name or (joined[at - 1] in bounds and joined[at + width] in bounds):
            # Entry i begins after the (i+1)th separator: count them up to here.
            index += joined.count(SEP, counted, at + 1)
            counted = at + 1
            yield index
        at = joined.find(needle, at + 1)


@dataclass(frozen=True)
class ScopeNames:
    """Entries 0..len(base)-1 are the base's, less `dead`; then the `tail`'s, in order."""

    revision: int
    base: Base = Base([], [], [], "", SEP)
    dead: frozenset[int] = frozenset()  # base entries of records replaced since
    tail: tuple[Entry, ...] = ()  # entries written since, in the order they were read
    record_count: int = 0  # titles; when too_large, the scope's records (no entries held)

    @cached_property
    def _tail_names(self) -> list[str]:
        return [normalize_name(display) for _, display, _ in self.tail]

    @cached_property
    def _tail_joined(self) -> str:
        return f"{SEP}{SEP.join(self._tail_names)}{SEP}"

    @cached_property
    def names(self) -> list[str]:
        """Every entry's normalized name, dead ones included."""
        return self.base.names + self._tail_names if self.tail else self.base.names

    @property
    def length(self) -> int:
        return len(self.base.names) + len(self.tail)

    @property
    def too_large(self) -> bool:
        return self.record_count > MAX_SCOPE_RECORDS

    def entry(self, index: int) -> Entry:
        """(record_id, display, is_alias) of entry `index`."""
        size = len(self.base.names)
        if index >= size:
            return self.tail[index - size]
        display = self.base.displays[index] or self.base.names[index].title()
        return self.base.record_id(index), display, self.base.aliases[index] == "1"

    def live_indices(self) -> list[int]:
        return [i for i in range(self.length) if i not in self.dead]

    def live_names(self) -> list[str]:
        return [self.names[i] for i in self.live_indices()] if self.dead else self.names

    def exact_indices(self, name: str) -> list[int]:
        found = _found(self.base.joined, name, whole_name=True)
        tail = _found(self._tail_joined, name, whole_name=True, offset=len(self.base.names))
        return [i for i in (*found, *tail) if i not in self.dead]

    def word_hits(self, query: str) -> list[int]:
        """Live entries holding every word of `query` as whole words, in its order."""
        found = _found(self.base.joined, query, whole_name=False)
        tail = _found(self._tail_joined, query, whole_name=False, offset=len(self.base.names))
        return sorted({i for i in (*found, *tail) if i not in self.dead})

    @classmethod
    def build(cls, revision: int, entries: list[Entry]) -> ScopeNames:
        names = [normalize_name(display) for _, display, _ in entries]
        ids = [rid for rid, _, _ in entries]
        aliases = "".join("1" if alias else "0" for _, _, alias in entries)
        displays = [display for _, display, _ in entries]
        base = Base(names, _pack(ids) or ids, displays, aliases, f"{SEP}{SEP.join(names)}{SEP}")
        return cls(revision, base, record_count=aliases.count("0"))

    def patched(self, revision: int, replaced: set[str], added: list[Entry]) -> ScopeNames | None:
        """The snapshot at `revision`: the `replaced` records' entries gone, `added` (their
        entries as they are now) appended. None when so much has changed since the base that
        reading the list afresh costs less."""
        tail = [entry for entry in self.tail if entry[0] not in replaced]
        gone = {i for rid in replaced for i in self.base.positions(rid)} - self.dead
        limit = max(PATCH_FLOOR, MAX_PATCHED_SHARE * len(self.base.names))
        if len(self.dead) + len(gone) + len(tail) + len(added) > limit:
            return None
        titles_gone = sum(self.base.aliases[i] == "0" for i in gone)
        titles_gone += sum(not alias for rid, _, alias in self.tail if rid in replaced)
        return ScopeNames(
            revision,
            self.base,
            self.dead | gone,
            (*tail, *added),
            self.record_count - titles_gone + sum(not alias for _, _, alias in added),
        )

    @classmethod
    def from_stored(cls, stored: StoredNameList) -> ScopeNames | None:
        """The list as stored_form kept it; None when the row does not read back whole
        (another layout, or columns that disagree), so that the caller builds it again."""
        count = len(stored.aliases)
        names = stored.names.split(SEP) if count else []
        displays = stored.displays.split(SEP) if count else []
        ids = bytes(stored.record_ids)
        whole = len(names) == len(displays) == count and len(ids) == ID_WIDTH * count
        if stored.layout != NAME_LIST_LAYOUT or stored.aliases.strip("01") or not whole:
            return None
        base = Base(names, ids, displays, stored.aliases, f"{SEP}{stored.names}{SEP}")
        return cls(stored.revision, base, record_count=stored.aliases.count("0"))

    def stored_form(self) -> dict[str, Any] | None:
        """The columns of a StoredNameList for this snapshot; None when one cannot hold it
        (a patched snapshot, a record ID that is no canonical UUID, a separator in a display)."""
        base = self.base
        if self.dead or self.tail or not isinstance(base.ids, bytes):
            return None
        displays = [
            "" if display == name.title() else display
            for display, name in zip(base.displays, base.names, strict=True)
        ]
        joined = SEP.join(displays)
        if joined.count(SEP) != max(0, len(displays) - 1):
            return None
        return {
            "layout": NAME_LIST_LAYOUT,
            "record_ids": base.ids,
            "names": base.joined[1:-1],
            "displays": joined,
            "aliases": base.aliases,
        }
