"""How search by meaning scores a record: the nearer of title and whole text, centred."""

from __future__ import annotations

import numpy as np

from records import selectors, services
from records.meaning import index, model
from records.meaning.embeddings import record_text
from records.models import Record
from tests.conftest import WORKSPACE, make_collection, make_record

BUSY_NOTES = (
    "Rolled the staging cluster to Kubernetes 1.30, rotated the database backup keys, moved the "
    "nightly Terraform plan to the new runner, and fixed the flaky Grafana alert on queue depth."
)


def expected_similarities(question: str) -> dict[str, float]:
    """Each active record's score computed directly in floats: the reference for the cache."""
    records = list(Record.objects.filter(workspace_id=WORKSPACE, archived_at=None))
    titles = model.embed_texts([r.title for r in records])
    wholes = model.embed_texts([record_text(r.title, r.data) for r in records])
    weight = len(records) / (len(records) + index.CENTRE_PRIOR)
    asked = model.embed_texts([question])[0]
    scores = {}
    parts = [(titles, titles.mean(axis=0) * weight), (wholes, wholes.mean(axis=0) * weight)]
    for position, record in enumerate(records):
        best = -1.0
        for vectors, centre in parts:
            a, r = asked - centre, vectors[position] - centre
            best = max(best, float(a @ r / np.linalg.norm(a) / np.linalg.norm(r)))
        scores[record.pk] = best
    return scores


def cached_similarities(question: str) -> dict[str, float]:
    vectors = index.scope_vectors(WORKSPACE)
    assert vectors is not None
    return dict(
        vectors.nearest(
            index.query_vector(question), collection_id=None, limit=100, min_similarity=-1.0
        )
    )


def test_a_title_drowned_by_its_values_is_found_by_the_title(ctx):
    notes = make_collection(ctx, "ops log", "What we did this week")
    make_record(ctx, notes, "MacBook expense claim", notes=BUSY_NOTES)
    make_record(ctx, notes, "Kubernetes cluster upgrade", notes="staging first")
    make_record(ctx, notes, "Database backup rotation")
    page = selectors.search_records(
        workspace_id=WORKSPACE, text="laptop reimbursement", mode="meaning"
    )
    assert [item["title"] for item in page["records"]] == ["MacBook expense claim"]
    assert page["records"][0]["matched"] == "meaning"


def test_similarity_is_the_nearer_part_centred_on_the_workspace_mean(
    ctx, django_capture_on_commit_callbacks
):
    notes = make_collection(ctx, "ops log", "What we did this week")
    first = make_record(ctx, notes, "Expense: laptop bag", price=80)
    for n in range(30):
        make_record(ctx, notes, f"Laptop purchase {n}", price=1000 + n, notes=BUSY_NOTES)
    make_record(ctx, notes, "MacBook expense claim", notes=BUSY_NOTES)
    make_record(ctx, notes, "Quarterly roadmap planning offsite")
    question = "laptop reimbursement"
    index.forget_cached()
    cached = cached_similarities(question)
    expected = expected_similarities(question)
    assert cached.keys() == expected.keys()
    assert max(abs(cached[k] - expected[k]) for k in expected) < 0.01

    # Writes patch the cached vectors (no reload) and the mean moves with them.
    loaded = held_vectors()
    with django_capture_on_commit_callbacks(execute=True):
        make_record(ctx, notes, "Laptop stand for the office", price=40)
    with django_capture_on_commit_callbacks(execute=True):
        services.record_archive(ctx=ctx, record_id=first.pk, expected_version=1)
    patched_vectors = held_vectors()
    assert patched_vectors is not loaded and patched_vectors.key == index.current_key(WORKSPACE)
    patched = cached_similarities(question)
    assert held_vectors() is patched_vectors
    expected = expected_similarities(question)
    assert patched.keys() == expected.keys() and len(patched) == len(cached)
    assert max(abs(patched[k] - expected[k]) for k in expected) < 0.01


def test_a_small_workspace_is_barely_centred(ctx):
    notes = make_collection(ctx, "ops log", "What we did this week")
    only = make_record(ctx, notes, "MacBook expense claim")
    index.forget_cached()
    score = cached_similarities("laptop reimbursement")[only.pk]
    asked, title = model.embed_texts(["laptop reimbursement", "MacBook expense claim"])
    assert abs(score - float(asked @ title)) < 0.01


def held_vectors() -> index.ScopeVectors:
    """The vectors this process holds for the test's workspace (there must be some)."""
    vectors = index.cached(WORKSPACE)
    assert vectors is not None
    return vectors
