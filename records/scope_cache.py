"""A per-process cache keyed by scope, each value valid at one revision of its counters.

A value serves a reader only while its revision equals the one the reader just read from the
database; anything else is a miss, and the reader loads afresh and puts the result (the last
put wins). Values are immutable once put. The lock guards only the mapping, never a load."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

R = TypeVar("R")
V = TypeVar("V")


class ScopeCache(Generic[R, V]):
    """At most `size` scopes, least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[Hashable, tuple[R, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, scope: Hashable, revision: R) -> V | None:
        """The value for `scope` if it is at `revision`, else None."""
        found = self.latest(scope)
        return found[1] if found is not None and found[0] == revision else None

    def latest(self, scope: Hashable) -> tuple[R, V] | None:
        """The scope's (revision, value), whatever its revision: to bring up to date."""
        with self._lock:
            found = self._values.get(scope)
            if found is not None:
                self._values.move_to_end(scope)
            return found

    def put(self, scope: Hashable, revision: R, value: V) -> None:
        with self._lock:
            self._values[scope] = (revision, value)
            self._values.move_to_end(scope)
            while len(self._values) > self._size:
                self._values.popitem(last=False)

    def drop(self, scope: Hashable) -> None:
        with self._lock:
            self._values.pop(scope, None)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
