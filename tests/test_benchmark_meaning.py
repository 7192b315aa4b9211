"""The meaning benchmark's recall and confidence rows, over a tiny labelled set built from
records.meaning.calibration's own record and question types (no figure is a timing)."""

from __future__ import annotations

from types import SimpleNamespace

from anchor_site.devtools.benchmarks import meaning
from records.meaning.calibration import LabelledQuery, StoreRecord

TINY = SimpleNamespace(
    collections=lambda: {"decisions": "What we decided", "expenses": "Money spent"},
    store=lambda size: [
        StoreRecord("decisions", "OAuth design decision", {"body": "PKCE for the web login"}),
        StoreRecord("expenses", "Expense: MacBook for Priya", {"amount": 2400}),
        StoreRecord("expenses", "Team lunch at the offsite", {"amount": 180}),
    ],
    queries=lambda: [
        LabelledQuery("laptop reimbursement", ("Expense: MacBook for Priya",), "other_words"),
        LabelledQuery("macbook priya", ("Expense: MacBook for Priya",), "same_words"),
        LabelledQuery("team lunch", ("Team lunch at the offsite",), "same_words"),
        LabelledQuery("banana smoothie recipe", (), "none"),
    ],
)


def test_recall_and_confidence_rows_per_mode_and_kind_over_a_labelled_set(db):
    workspace_id = meaning.load_set(TINY, 3)
    found = meaning.measure_recall(workspace_id, TINY.queries())
    assert found[("words", "other_words")] == [None]  # no word of the question is stored
    assert found[("hybrid", "other_words")] == [1]
    assert found[("words", "same_words")] == found[("hybrid", "same_words")] == [1, 1]
    # Three records are too few for the calibrated thresholds: the row is what is tested.
    assert found[("confidence", "none")][0] in ("strong", "weak", "none")
    found[("confidence", "none")] = ["none"]
    rows = {row.what: row for row in meaning.recall_table(found, 10_000)}
    hybrid = rows["recall@10, 10,000 records, other words (1 questions), hybrid"]
    assert (hybrid.value, hybrid.passed, hybrid.note) == (100.0, True, "@1 100.0 %, @5 100.0 %")
    assert rows["recall@10, 10,000 records, other words (1 questions), words"].value == 0.0
    same = rows["recall@10, 10,000 records, same words (2 questions), hybrid"]
    assert (same.value, same.passed) == (100.0, True)
    none = rows["confidence none, 10,000 records, questions with no answer (1)"]
    assert (none.value, none.passed) == (100.0, True)
    answerable = rows["confidence none, 10,000 records, answerable questions (3)"]
    assert (answerable.value, answerable.passed) == (0.0, True)
    assert len([what for what in rows if not what.startswith("profile")]) == 8


def test_a_recall_miss_is_profiled_by_what_outranks_the_answers():
    found: meaning.Found = {("hybrid", "other_words"): [1, None]}
    found[("above", "other_words")] = [[True, False] * 2 + [True] * 6]
    rows = {row.what: row for row in meaning.recall_table(found, 10_000)}
    profile = rows["profile, 10,000 records, other words: written answers"]
    assert profile.value == 80.0
    assert profile.note.startswith("1 questions; of their 10 records on the page, 80 % are")
