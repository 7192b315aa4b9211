"""How search by meaning scores a record: the nearer of title and whole text, centred, less its
hubness."""

from __future__ import annotations

from typing import Any

import numpy as np

from records import selectors, services
from records.meaning import index, model
from records.meaning.embeddings import record_text
from records.models import Record
from tests.conftest import OTHER_WORKSPACE, WORKSPACE, make_collection, make_record

BUSY_NOTES = (
    "Rolled the staging cluster to Kubernetes 1.30, rotated the database backup keys, moved the "
    "nightly Terraform plan to the new runner, and fixed the flaky Grafana alert on queue depth."
)


def expected_similarities(question: str) -> dict[str, float]:
    """Each active record's score computed directly in floats: the reference for the cache.
    The similarity of the nearer part, centred, less HUB_WEIGHT times the mean similarity of
    the record's whole text to the HUB_NEIGHBOURS nearest others (all are candidates here)."""
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
    centred = wholes - parts[1][1]
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    alike = centred @ centred.T
    np.fill_diagonal(alike, -np.inf)
    neighbours = min(index.HUB_NEIGHBOURS, len(records) - 1)
    for position, record in enumerate(records):
        hub = np.sort(alike[position])[-neighbours:].mean() if neighbours else 0.0
        scores[record.pk] -= index.HUB_WEIGHT * float(hub)
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
    ctx, django_capture_on_commit_callbacks, monkeypatch
):
    # More than a search embeds itself, inside this test's transaction no thread can see.
    monkeypatch.setattr(index, "INLINE_CATCH_UP", 100)
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


def reversed_keys(value: Any) -> Any:
    """The same data with every object's keys in the opposite order (lists keep theirs)."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(value)}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


STORE: dict[str, dict[str, Any]] = {
    "OAuth design decision": {
        "owner": "Mei",
        "body": "Use PKCE for the web app login flow; refresh tokens rotate on every use.",
        "links": {"ticket": "ENG-12", "doc": "Sign-in design notes for the mobile app"},
        "priority": 2,
    },
    "Expense: MacBook for Priya": {"amount": 2400, "notes": "Laptop replaced after water damage"},
    "Database migration to PostgreSQL 16": {
        "status": "done",
        "steps": ["dump", "restore and verify row counts", "cut over"],
    },
    "Quarterly roadmap planning offsite": {"where": "Lisbon", "agenda": "Goals for next quarter"},
}


def test_a_records_text_is_the_same_whatever_the_order_of_its_keys():
    data = STORE["OAuth design decision"]
    assert list(reversed_keys(data)) != list(data)
    text = record_text("OAuth", data)
    assert text == record_text("OAuth", reversed_keys(data))
    # Longest values first (numbers as their digits), equal lengths by key path.
    assert text == (
        "OAuth Use PKCE for the web app login flow; refresh tokens rotate on every use. "
        "Sign-in design notes for the mobile app ENG-12 Mei 2"
    )
    assert record_text("t", {"b": "xy", "a": "zw"}) == record_text("t", {"a": "zw", "b": "xy"})
    assert record_text("t", {"b": "xy", "a": "zw"}) == "t zw xy"
    vectors = model.embed_texts([text, record_text("OAuth", reversed_keys(data))])
    assert np.array_equal(vectors[0], vectors[1])


def test_the_same_store_written_with_keys_in_another_order_ranks_the_same(ctx, other_ctx):
    for context, shape in ((ctx, dict), (other_ctx, reversed_keys)):
        notes = make_collection(context, "decisions", "Decisions we made and why")
        for title, data in STORE.items():
            make_record(context, notes, title, **shape(data))
    question = "how do users sign in"
    rankings = []
    for workspace in (WORKSPACE, OTHER_WORKSPACE):
        page = selectors.search_records(workspace_id=workspace, text=question, mode="meaning")
        vectors = index.scope_vectors(workspace)
        assert vectors is not None
        titles = dict(Record.objects.filter(workspace_id=workspace).values_list("pk", "title"))
        scores = vectors.nearest(
            index.query_vector(question), collection_id=None, limit=100, min_similarity=-1.0
        )
        ranked = [(titles[pk], round(score, 6)) for pk, score in scores]
        rankings.append(([item["title"] for item in page["records"]], ranked))
    assert rankings[0] == rankings[1]
    assert rankings[0][0][0] == "OAuth design decision"


def test_a_record_below_the_floor_gives_its_place_to_one_above_it(ctx):
    """The page is the best scores among records at or above the floor: one under it never
    takes a place that a record above it then loses."""
    notes = make_collection(ctx, "ops log", "What we did this week")
    for title in ("MacBook expense claim", "Laptop stipend policy", "Kubernetes upgrade"):
        make_record(ctx, notes, title, notes=BUSY_NOTES)
    for title in ("Database backup rotation", "Team offsite in Goa", "Grafana alert tuning"):
        make_record(ctx, notes, title)
    for title in ("Expense: taxi to airport", "Expense: hotel in Pune"):
        make_record(ctx, notes, title)
    vectors = index.scope_vectors(WORKSPACE)
    asked = index.query_vector("spending")
    all_rows = np.arange(len(vectors))
    similar = dict(zip(vectors.record_ids, vectors._similarities(asked, all_rows), strict=True))
    scores = dict(vectors.nearest(asked, collection_id=None, limit=100, min_similarity=-1.0))
    by_score = sorted(scores, key=lambda record_id: -scores[record_id])
    # A floor just above the best-scored record's similarity leaves it out, and keeps those more
    # similar than it (hubness put it first).
    floor = float(similar[by_score[0]]) + 1e-6
    above = [record_id for record_id in by_score if similar[record_id] >= floor]
    assert above, "the set must hold a record more similar than the best-scored one"
    page = vectors.nearest(asked, collection_id=None, limit=1, min_similarity=floor)
    assert [record_id for record_id, _ in page] == above[:1]
