"""What a row holds, the sizes a run uses, timing and percentiles, and the printed table."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class Row:
    """One line of the table. `value` and `reference` are in `unit`; None means not measured."""

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
    profile: int = 1  # re-run a phase whose row missed under a profiler (0: never)
    meaning_records: int = 100_000  # active records in the workspace searched by meaning
    # Of those, how many the model embeds; the rest get copies of these vectors: a search's
    # cost depends on how many vectors it scores, not their values.
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


def median_ms(seconds: list[float]) -> float | None:
    return statistics.median(seconds) * 1000 if seconds else None


def p95_ms(seconds: list[float]) -> float | None:
    ordered = sorted(seconds)
    return (
        ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000 if seconds else None
    )


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)
    warmup: int = 0  # the first this many added are left out: they warm up

    @property
    def median_ms(self) -> float:
        return median_ms(self.seconds) or 0.0

    @property
    def p95_ms(self) -> float:
        return p95_ms(self.seconds) or 0.0

    def add(self, seconds: float) -> None:
        if self.warmup:
            self.warmup -= 1
        else:
            self.seconds.append(seconds)

    def timed(self, fn: Callable[[], T]) -> T:
        """`fn`'s result, its time added to the samples."""
        started = time.perf_counter()
        result = fn()
        self.add(time.perf_counter() - started)
        return result


def repeat(fn: Callable[[], Any], times: int, *, warmup: int = 1) -> Samples:
    """Time `fn` `times` times after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = Samples()
    for _ in range(times):
        samples.timed(fn)
    return samples


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


# --- the table ---------------------------------------------------------------------------------

UNITS = {"s": "{:.2f} s", "/s": "{:,.0f} /s", "tokens": "{:,.0f} tok", "MB": "{:.0f} MB"}


def amount(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ms":  # a patch of microseconds still shows its figure
        return (
            f"{value:.3f} ms"
            if value < 1
            else f"{value:.1f} ms"
            if value < 100
            else f"{value:,.0f} ms"
        )
    return UNITS.get(unit, "{:g} " + unit).format(value)


def verdict(row: dict[str, Any]) -> str:
    if row["value"] is None and row["note"].startswith(("error", "exit")):
        return "ERROR"
    return {True: "PASS", False: "MISS", None: "-"}[row["passed"]]


def _ratio(row: dict[str, Any]) -> str:
    if (ratio := row.get("ratio")) is None:
        return "-"
    faster = row["unit"] in ("ms", "s") and ratio < 1
    return f"{1 / ratio:.1f}x faster" if faster else f"{ratio:.2f}x"


def table(title: str, rows: list[dict[str, Any]]) -> list[str]:
    header = ("what", "median", "p95", "target", "reference", "ratio", "result")
    body = [
        (
            row["what"],
            amount(row["value"], row["unit"]),
            amount(row["p95"], row["unit"]),
            row["target"] or "-",
            amount(row["reference"], row["unit"]),
            _ratio(row),
            verdict(row),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    widths[0] = min(widths[0], 100)

    def fmt(line: tuple[str, ...]) -> str:
        first = line[0] if len(line[0]) <= widths[0] else line[0][: widths[0] - 1] + "…"
        cells = [first.ljust(widths[0])]
        return "  ".join(cells + [c.rjust(widths[i]) for i, c in enumerate(line[1:], start=1)])

    out = [f"== {title} ==", fmt(header), "  ".join("-" * w for w in widths)]
    for row, line in zip(rows, body, strict=True):
        out.append(fmt(line))
        extra = [row["what"]] if len(row["what"]) > widths[0] else []
        extra += [f"reference: {row['reference_what']}"] if row["reference_what"] else []
        extra += [row["note"]] if row["note"] else []
        if extra:
            out.append("    " + "; ".join(extra))
        out.extend("  " + line for line in row.get("profile") or [])
    return out


def timed_row(
    what: str,
    samples: Samples,
    *,
    under_ms: float | None = None,
    at_most: tuple[float, Samples, str] | None = None,
    **fields: Any,
) -> Row:
    """A row of milliseconds: the samples' median, with their p95. Its target: `under_ms`, or
    `at_most` (times, reference samples, what they are) that many times the reference's median,
    which is the row's reference."""
    if under_ms is not None:
        fields.update(target=f"< {under_ms:g} ms", passed=samples.median_ms < under_ms)
    if at_most is not None:
        times, reference, of = at_most
        passed = samples.median_ms <= times * reference.median_ms
        fields.update(target=f"<= {times:g}x {of}", passed=passed, reference=reference.median_ms)
    return Row(what, samples.median_ms, "ms", p95=samples.p95_ms, **fields)
