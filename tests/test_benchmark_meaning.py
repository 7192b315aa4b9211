"""The meaning benchmark's recall@10 rows, over a tiny labelled set of the same interface as
anchor_site/devtools/benchmarks/meaning_set.py (no figure is a timing)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from anchor_site.devtools.benchmarks import meaning


@dataclass(frozen=True)
class StoreRecord:
    collection: str
    title: str
    data: dict[str, object]


@dataclass(frozen=True)
class LabelledQuery:
    text: str
    expected: tuple[str, ...]
    kind: str


TINY = SimpleNamespace(
    collections=lambda: {"decisions": "What we decided", "expenses": "Money spent"},
    store=lambda: [
        StoreRecord("decisions", "OAuth design decision", {"body": "PKCE for the web login"}),
        StoreRecord("expenses", "Expense: MacBook for Priya", {"amount": 2400}),
        StoreRecord("expenses", "Team lunch at the offsite", {"amount": 180}),
    ],
    queries=lambda: [
        LabelledQuery("laptop reimbursement", ("Expense: MacBook for Priya",), "other_words"),
        LabelledQuery("macbook priya", ("Expense: MacBook for Priya",), "same_words"),
        LabelledQuery("team lunch", ("Team lunch at the offsite",), "same_words"),
    ],
)


def test_recall_rows_per_mode_and_kind_over_a_labelled_set(db):
    workspace_id = meaning.load_set(TINY)
    found = meaning.measure_recall(workspace_id, TINY.queries())
    assert found[("words", "other_words")] == [False]  # no word of the question is stored
    assert found[("hybrid", "other_words")] == [True]
    assert found[("words", "same_words")] == found[("hybrid", "same_words")] == [True, True]
    rows = {row.what: row for row in meaning.recall_table(found)}
    hybrid = rows["recall@10, other words (1 questions), hybrid"]
    assert (hybrid.value, hybrid.passed) == (100.0, True)
    assert rows["recall@10, other words (1 questions), words"].value == 0.0
    same = rows["recall@10, same words (2 questions), hybrid"]
    assert (same.value, same.passed, same.reference) == (100.0, True, 100.0)
    assert len(rows) == 6
