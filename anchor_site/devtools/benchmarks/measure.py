"""What a benchmark row holds, the sizes a run uses, and the timing helpers every area shares."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Row:
    """One line of the table. `value` and `reference` are in `unit`; None means not measured."""

    area: str
    what: str
    value: float | None
    unit: str
    p95: float | None = None
    target: str = ""
    passed: bool | None = None  # None: reported only, no target
    reference: float | None = None
    reference_what: str = ""
    ratio: float | None = None
    note: str = ""
    profile: list[str] = field(default_factory=list)  # lines explaining a miss, if profiled

    def __post_init__(self) -> None:
        if self.ratio is None and self.value and self.reference:
            self.ratio = self.value / self.reference

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Sizes:
    """How much data and how many calls; `--quick` and the size options pick these."""

    records: int = 1_000_000  # total records in the workspace for the search rows
    events: int = 1_000_000  # audit events in the workspace the session rows run on
    names: int = 100_000  # titles in the scope resolve_record scans
    import_names: int = 10_000
    import_rows: int = 100
    calls: int = 1_000  # stdio round trips per tool
    writes: int = 200  # prepare + commit pairs
    repeat: int = 20  # timed repetitions of an in-process call
    reference_repeat: int = 3  # repetitions of a slow reference
    startups: int = 5
    collections: int = 10  # the bulk records are spread over this many collections
    profile: int = 1  # re-run a phase whose row missed under py-spy (0: never)
    meaning_records: int = 100_000  # active records in the workspace searched by meaning
    # Of those, how many the model embeds (the catch-up row's figure); the rest are given copies
    # of these vectors, since a search's cost depends on how many vectors it scores, not their
    # values, and the model embeds 100-200 records a second on one core.
    meaning_embedded: int = 2_000
    # The labelled set (records.meaning.calibration) is measured at 1,000 records and at this.
    meaning_set_records: int = 10_000

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            records=100_000,
            events=100_000,
            names=20_000,
            calls=200,
            writes=50,
            repeat=7,
            reference_repeat=1,
            startups=3,
            profile=0,
            meaning_embedded=200,
            meaning_set_records=1_000,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p95_ms(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000


def repeat(fn: Callable[[], Any], times: int, *, warmup: int = 1) -> Samples:
    """Time `fn` `times` times after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = Samples()
    for _ in range(times):
        started = time.perf_counter()
        fn()
        samples.seconds.append(time.perf_counter() - started)
    return samples


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def statements(fn: Callable[[], Any]) -> int:
    """SQL statements `fn` runs in this process (what a call costs in round trips to the
    database, which a loaded machine makes dear)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured.captured_queries)
