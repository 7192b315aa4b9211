"""The record IDs, displays and alias flags of a stored name list, read without unpacking.

A fresh process reads a scope's list from one row (workflow.models.StoredNameList) and answers
its first resolve with it at once. Splitting a column into one Python object per entry costs
more than reading it, and a resolve reads only the few entries it returns, so each column keeps
its stored form and decodes an entry when it is asked for:

- record IDs packed 16 bytes each (the UUID's bytes), found by a C-speed search of the bytes;
- displays joined by the separator, with the offset of every STEP-th entry so that one entry is
  a short split away; a display that is its name title-cased ("Rahul Sharma" for "rahul sharma",
  what most person and company names are) is stored empty and derived from the name when asked
  for, so the row a fresh process reads carries mostly the names once, not twice;
- alias flags as the stored "0"/"1" string.

Entries appended after the read (a patch) are held as plain values in each column's `tail`; a
list built from the records is all tail. Each column is append-only, as the store behind it is
(see workflow.name_index.Entries): a reader bounds itself by its view's length.
"""

from __future__ import annotations

import re
import sys
import uuid
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain, islice, pairwise

SEP = "\x1f"  # between joined entries; see workflow.name_index
ID_WIDTH = 16
STEP = 64  # entries between two display marks: an entry costs a split of at most this many
DERIVED = ""  # a stored display that is its name title-cased (see derived_display)
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LITTLE = sys.byteorder == "little"


def owner_key(record_id: str) -> str:
    """A record ID as a packed column's owner map holds it: its 32 hex digits for a canonical
    UUID (what a packed entry reads as, cheaply), else marked so that it equals none of them."""
    if _CANONICAL.fullmatch(record_id):
        return record_id.replace("-", "")
    return f"!{record_id}"


def _marks_to_bytes(marks: list[int]) -> bytes:
    packed = array("I", marks)
    if not _LITTLE:
        packed.byteswap()
    return packed.tobytes()


def _marks_from_bytes(data: bytes) -> array:
    marks = array("I")
    marks.frombytes(data)
    if not _LITTLE:
        marks.byteswap()
    return marks


class PackedIds(Sequence[str]):
    """Record IDs: the `packed` part 16 bytes an entry, then the `tail` as strings."""

    def __init__(self, packed: bytes = b"", tail: list[str] | None = None) -> None:
        if len(packed) % ID_WIDTH:
            raise ValueError("packed record IDs must be 16 bytes each")
        self.packed = packed
        self.packed_count = len(packed) // ID_WIDTH
        self.tail: list[str] = [] if tail is None else tail
        # A list read whole from the records has no packed part: its IDs are their own keys.
        self.key = owner_key if packed else str

    def __len__(self) -> int:
        return self.packed_count + len(self.tail)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]  # one entry, no slices
        if index < 0:
            index += len(self)
        if index < 0 or index >= len(self):
            raise IndexError(index)
        if index < self.packed_count:
            start = index * ID_WIDTH
            return str(uuid.UUID(bytes=self.packed[start : start + ID_WIDTH]))
        return self.tail[index - self.packed_count]

    def __iter__(self) -> Iterator[str]:
        packed = self.packed
        for start in range(0, len(packed), ID_WIDTH):
            yield str(uuid.UUID(bytes=packed[start : start + ID_WIDTH]))
        yield from self.tail

    def extend(self, record_ids: Iterable[str]) -> None:
        self.tail.extend(record_ids)

    def positions(self, record_id: str) -> Iterator[int]:
        """Every entry of this record, by string search (in C) of both parts."""
        if self.packed and _CANONICAL.fullmatch(record_id):
            needle = uuid.UUID(record_id).bytes
            packed = self.packed
            position = packed.find(needle)
            while position != -1:
                if position % ID_WIDTH == 0:  # not a match straddling two IDs
                    yield position // ID_WIDTH
                position = packed.find(needle, position + 1)
        tail, start = self.tail, 0
        while True:
            try:
                index = tail.index(record_id, start)
            except ValueError:
                return
            yield self.packed_count + index
            start = index + 1

    def keys(self) -> Iterator[str]:
        """Each entry's `key`, in order: hex slices of the packed part, no UUID objects."""
        digits = self.packed.hex()
        width = 2 * ID_WIDTH
        yield from (digits[start : start + width] for start in range(0, len(digits), width))
        yield from map(self.key, self.tail)

    def pack(self) -> bytes | None:
        """Every ID packed, or None when one is not a canonical UUID."""
        joined = "".join(self.tail)
        count = len(self.tail)
        if len(joined) != 36 * count or joined.count("-") != 4 * count:
            return None
        if any(set(joined[at::36]) - {"-"} for at in (8, 13, 18, 23)) or joined != joined.lower():
            return None
        try:
            tail = bytes.fromhex(joined.replace("-", ""))
        except ValueError:
            return None
        if len(tail) != ID_WIDTH * count:  # fromhex skips whitespace: an ID held some
            return None
        return self.packed + tail


def derived_display(name: str) -> str:
    """What a display stored as DERIVED reads as: its normalized name, title-cased. A display
    is stored so only when this gives it back exactly (an empty display has an empty name)."""
    return name.title()


class JoinedTexts(Sequence[str]):
    """Displays: the `joined` part's entries between separators, then the `tail`.

    `marks[k]` is where entry k*STEP begins in `joined`, so entry i is found by splitting at
    most STEP entries, never the whole string. With `names` (the entries' normalized names, in
    the same order), a joined entry stored as DERIVED reads as derived_display of its name.
    """

    def __init__(
        self,
        joined: str = "",
        count: int = 0,
        marks: Sequence[int] = (),
        tail: list[str] | None = None,
        names: Sequence[str] = (),
    ) -> None:
        if count and len(marks) != (count + STEP - 1) // STEP:
            raise ValueError("a mark is due every STEP entries")
        if names and len(names) < count:
            raise ValueError("a derived display needs its entry's name")
        self.joined = joined
        self.joined_count = count
        self.marks = marks
        self.names = names
        self.tail: list[str] = [] if tail is None else tail

    @classmethod
    def read(
        cls, joined: str, count: int, marks: bytes, names: Sequence[str] = ()
    ) -> JoinedTexts | None:
        """The stored column, or None when it does not hold `count` entries as marked."""
        if len(marks) % 4 or len(marks) // 4 != (count + STEP - 1) // STEP:
            return None
        offsets = _marks_from_bytes(marks)
        if joined.count(SEP) != max(0, count - 1):
            return None
        if offsets and offsets[0] != 0:
            return None
        # Each later mark must begin the entry STEP on from the one before: just past a
        # separator, with STEP separators since (empty entries are separators side by side).
        for before, after in pairwise(offsets):
            if not before < after <= len(joined) or joined[after - 1] != SEP:
                return None
            if joined.count(SEP, before, after) != STEP:
                return None
        return cls(joined, count, offsets, names=names)

    def __len__(self) -> int:
        return self.joined_count + len(self.tail)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]  # one entry, no slices
        if index < 0:
            index += len(self)
        if index < 0 or index >= len(self):
            raise IndexError(index)
        if index >= self.joined_count:
            return self.tail[index - self.joined_count]
        block, within = divmod(index, STEP)
        start = self.marks[block]
        # The block ends where the next begins (less its separator), or with the string.
        end = self.marks[block + 1] - 1 if block + 1 < len(self.marks) else len(self.joined)
        text = self.joined[start:end].split(SEP, within + 1)[within]
        return derived_display(self.names[index]) if self.names and text == DERIVED else text

    def __iter__(self) -> Iterator[str]:
        if self.joined_count:
            texts = self.joined.split(SEP)
            if self.names:
                yield from (
                    derived_display(name) if text == DERIVED else text
                    for text, name in zip(texts, self.names, strict=False)
                )
            else:
                yield from texts
        yield from self.tail

    def extend(self, texts: Iterable[str]) -> None:
        self.tail.extend(texts)

    def joined_form(self, names: Sequence[str] | None = None) -> tuple[str, bytes] | None:
        """Every entry joined, and the marks; None when an entry holds the separator. With
        `names` (each entry's normalized name), a display its name derives is stored DERIVED."""
        texts = list(self) if self.joined_count else self.tail
        if names is not None:
            texts = [
                DERIVED if text == derived_display(name) else text
                for text, name in zip(texts, names, strict=True)
            ]
        joined = SEP.join(texts)
        if joined.count(SEP) != max(0, len(texts) - 1):
            return None
        starts = accumulate(chain((0,), (len(t) + 1 for t in texts)))
        return joined, _marks_to_bytes(list(islice(starts, 0, len(texts), STEP)))


class Flags(Sequence[bool]):
    """Alias flags: the `stored` "0"/"1" string (one character an entry), then the `tail`."""

    def __init__(self, stored: str = "", tail: list[bool] | None = None) -> None:
        self.stored = stored
        self.tail: list[bool] = [] if tail is None else tail

    def __len__(self) -> int:
        return len(self.stored) + len(self.tail)

    def __getitem__(self, index: int) -> bool:  # type: ignore[override]  # one entry, no slices
        if index < 0:
            index += len(self)
        if index < 0 or index >= len(self):
            raise IndexError(index)
        if index < len(self.stored):
            return self.stored[index] == "1"
        return self.tail[index - len(self.stored)]

    def __iter__(self) -> Iterator[bool]:
        yield from map("1".__eq__, self.stored)
        yield from self.tail

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def count(self, value: object) -> int:
        if not isinstance(value, bool):
            return 0
        return self.stored.count("1" if value else "0") + self.tail.count(value)

    def extend(self, flags: Iterable[bool]) -> None:
        self.tail.extend(flags)

    def stored_form(self) -> str:
        return self.stored + "".join("1" if flag else "0" for flag in self.tail)
