"""Search by meaning in the store: embeddings kept with each write, caught up, and searched."""

from __future__ import annotations

import threading

import pytest
from django.db import transaction
from django.test import override_settings

from records import selectors, services
from records.meaning import embeddings, index, model
from records.meaning.embeddings import missing_record_ids
from records.models import Record, RecordEmbedding
from records.selectors.meaning_search import confidence
from records.services import NewRecord, WriteContext
from tests.conftest import OTHER_WORKSPACE, WORKSPACE, make_collection, make_record
from tests.polling import wait_until
from tests.records.helpers import refused


def search(workspace_id: str = WORKSPACE, **kwargs):
    return selectors.search_records(workspace_id=workspace_id, **kwargs)


def titles(page) -> list[str]:
    return [item["title"] for item in page["records"]]


@pytest.fixture
def decisions(ctx):
    notes = make_collection(ctx, "decisions", "Decisions we made and why")
    return {
        "oauth": make_record(
            ctx, notes, "OAuth design decision", body="Use PKCE for the web app login flow"
        ),
        "laptop": make_record(ctx, notes, "Expense: MacBook for Priya", amount=2400),
        "db": make_record(ctx, notes, "Database migration to PostgreSQL 16"),
        "offsite": make_record(ctx, notes, "Quarterly roadmap planning offsite"),
        "collection": notes,
    }


# --- embeddings kept with the data --------------------------------------------------------------


def test_a_write_where_nothing_searches_by_meaning_embeds_nothing_until_a_search_does(
    ctx, decisions
):
    # No search by meaning has run in this process: the writes called no model.
    assert not RecordEmbedding.objects.filter(workspace_id=WORKSPACE).exists()
    assert not index.holds(WORKSPACE)
    page = search(text="what did we decide about sign-in", mode="meaning")
    assert page["mode"] == "meaning" and titles(page)[0] == "OAuth design decision"
    assert RecordEmbedding.objects.filter(workspace_id=WORKSPACE).count() == 4
    assert missing_record_ids(WORKSPACE) == []


def test_create_stores_the_embedding_with_model_name_and_versions(ctx, decisions):
    search(text="laptop", mode="meaning")  # this process now searches the workspace by meaning
    record = make_record(ctx, decisions["collection"], "OAuth token lifetime")
    stored = RecordEmbedding.objects.get(record=record)
    assert stored.model_name == model.MODEL_NAME
    assert stored.model_version == model.model_version() == "1.0.0/title+whole/longest-first"
    assert stored.record_version == 1
    assert len(bytes(stored.vector)) == model.STORED_DIMENSIONS and stored.scale > 0
    assert stored.workspace_id == WORKSPACE


def test_update_and_rename_recompute_the_embedding_and_archive_carries_it(ctx, decisions):
    search(text="laptop", mode="meaning")
    record = decisions["laptop"]
    before = bytes(RecordEmbedding.objects.get(record=record).vector)
    services.record_update(
        ctx=ctx, record_id=record.pk, changes={"note": "a new laptop"}, expected_version=1
    )
    updated = RecordEmbedding.objects.get(record=record)
    assert updated.record_version == 2 and bytes(updated.vector) != before
    services.record_rename(ctx=ctx, record_id=record.pk, title="Laptop", expected_version=2)
    renamed = RecordEmbedding.objects.get(record=record)
    assert renamed.record_version == 3 and bytes(renamed.vector) != bytes(updated.vector)
    services.record_archive(ctx=ctx, record_id=record.pk, expected_version=3)
    archived = RecordEmbedding.objects.get(record=record)
    assert archived.record_version == 4 and bytes(archived.vector) == bytes(renamed.vector)


def test_bulk_writes_embed_nothing_and_a_search_by_meaning_catches_them_up(ctx, decisions):
    search(text="laptop", mode="meaning")
    rows = [NewRecord(ctx=ctx, title=f"Bulk {n}", data={"n": n}) for n in range(3)]
    written = services.record_create_many(collection_id=decisions["collection"].pk, rows=rows)
    assert not RecordEmbedding.objects.filter(record__in=written).exists()
    assert sorted(missing_record_ids(WORKSPACE)) == sorted(r.pk for r in written)
    search(text="bulk", mode="meaning")
    assert RecordEmbedding.objects.filter(record__in=written).count() == 3
    assert missing_record_ids(WORKSPACE) == []


def test_outdated_embeddings_are_recomputed(decisions):
    search(text="laptop", mode="meaning")
    index.forget_cached()  # as a process started after the model changed
    oauth = decisions["oauth"]
    RecordEmbedding.objects.filter(record=oauth).update(model_version="0.0.1")
    RecordEmbedding.objects.filter(record=decisions["db"]).delete()
    assert sorted(missing_record_ids(WORKSPACE)) == sorted([oauth.pk, decisions["db"].pk])
    page = search(text="what did we decide about sign-in", mode="meaning")
    assert titles(page)[0] == "OAuth design decision"
    assert missing_record_ids(WORKSPACE) == []
    assert RecordEmbedding.objects.get(record=oauth).model_version == model.model_version()


# --- the search -----------------------------------------------------------------------------------


def test_meaning_finds_a_paraphrase_words_miss(decisions):
    assert titles(search(text="laptop reimbursement")) == []
    page = search(text="laptop reimbursement", mode="meaning")
    assert page["mode"] == "meaning"
    first = page["records"][0]
    assert first["title"] == "Expense: MacBook for Priya"
    assert first["matched"] == "meaning"
    assert first["evidence"] == "related, not identity evidence"
    assert 0 < first["similarity"] <= 1
    assert "match_snippet" not in first


def test_matched_says_words_meaning_or_both(ctx, decisions):
    make_record(ctx, decisions["collection"], "Sign-in page colours", body="blue")
    page = search(text="sign-in decision", mode="meaning")
    matched = {item["title"]: item["matched"] for item in page["records"]}
    assert matched["OAuth design decision"] in ("meaning", "both")
    words_only = search(text="colours", mode="meaning")
    labels = {item["title"]: item for item in words_only["records"]}
    hit = labels["Sign-in page colours"]
    assert hit["matched"] in ("words", "both") and "[" in hit["match_snippet"]
    if hit["matched"] == "words":
        assert "evidence" not in hit


def test_words_mode_is_unchanged_by_default(decisions):
    default = search(text="decision")
    explicit = search(text="decision", mode="words")
    assert default == explicit
    assert "matched" not in default["records"][0] and "mode" not in default


def test_meaning_mode_pages_with_cursors_without_repeats(ctx, decisions):
    for n in range(12):
        make_record(ctx, decisions["collection"], f"Laptop purchase {n}", price=1000 + n)
    everything = search(text="laptop reimbursement", mode="meaning", limit=100)
    seen, cursor = [], None
    while True:
        page = search(text="laptop reimbursement", mode="meaning", limit=5, cursor=cursor)
        seen += [item["record_id"] for item in page["records"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == [item["record_id"] for item in everything["records"]]
    assert len(seen) == len(set(seen)) >= 13
    refused("INVALID_INPUT", "cursor", search, text="laptop", mode="meaning", cursor=cursor)


def test_filters_where_and_collection_hold_in_meaning_mode(ctx, decisions):
    other = make_collection(ctx, "purchases")
    make_record(ctx, other, "Laptop bought for Sam", amount=900)
    scoped = search(text="laptop reimbursement", mode="meaning", collection_id=other.pk)
    assert titles(scoped) == ["Laptop bought for Sam"]
    cheap = search(
        text="laptop reimbursement",
        mode="meaning",
        where=[{"field": ["amount"], "op": "gt", "value": 2000}],
    )
    assert titles(cheap) == ["Expense: MacBook for Priya"]


def test_another_workspace_sees_nothing(ctx, other_ctx, decisions):
    theirs = make_collection(other_ctx, "expenses")
    make_record(other_ctx, theirs, "Laptop reimbursement claim", amount=1500)
    mine = search(text="laptop reimbursement", mode="meaning")
    assert "Laptop reimbursement claim" not in titles(mine)
    other = search(OTHER_WORKSPACE, text="laptop reimbursement", mode="meaning")
    assert titles(other) == ["Laptop reimbursement claim"]


def test_archived_records_are_not_found_by_meaning(ctx, decisions):
    services.record_archive(ctx=ctx, record_id=decisions["laptop"].pk, expected_version=1)
    page = search(text="laptop reimbursement", mode="meaning")
    assert "Expense: MacBook for Priya" not in titles(page)


def test_bad_mode_and_meaning_without_text_are_refused(decisions):
    error = refused("INVALID_INPUT", "mode", search, text="laptop", mode="semantic")
    assert '"meaning"' in error.message
    refused("INVALID_INPUT", "mode", search, query="Expense", mode="meaning")
    refused(
        "INVALID_INPUT",
        "order_by",
        search,
        text="x",
        mode="meaning",
        order_by={"field": ["amount"], "type": "number"},
    )


@override_settings(ANCHOR_MEANING=False)
def test_meaning_off_refuses_the_mode_and_embeds_nothing(ctx, decisions):
    error = refused("UNSUPPORTED", "mode", search, text="laptop", mode="meaning")
    assert "ANCHOR_MEANING" in error.message
    record = make_record(ctx, decisions["collection"], "Written while off")
    assert not RecordEmbedding.objects.filter(record=record).exists()
    assert titles(search(text="written")) == ["Written while off"]


@pytest.mark.django_db(transaction=True)
def test_a_bulk_write_is_embedded_in_the_background_from_its_commit_without_a_search():
    services.workspace_ensure(WORKSPACE)
    ctx = WriteContext(workspace_id=WORKSPACE, actor_id="a", decision_reason="bulk")
    claims = make_collection(ctx, "claims")
    few = [NewRecord(ctx=ctx, title=f"Phone claim {n}", data={}) for n in range(3)]
    services.record_create_many(collection_id=claims.pk, rows=few)
    # As few as the next search embeds itself: the model is not loaded for them.
    assert not embeddings.catching_up(WORKSPACE) and len(missing_record_ids(WORKSPACE)) == 3
    more = embeddings.INLINE_CATCH_UP + 1
    rows = [NewRecord(ctx=ctx, title=f"Laptop claim {n}", data={}) for n in range(more)]
    services.record_create_many(collection_id=claims.pk, rows=rows)
    wait_until(lambda: missing_record_ids(WORKSPACE) == [], "the background embedding")
    assert not index.holds(WORKSPACE)  # no search asked for them


@pytest.mark.django_db(transaction=True)
def test_while_a_bulk_write_is_embedded_a_search_ranks_the_rest_by_words_and_counts_them(
    monkeypatch,
):
    services.workspace_ensure(WORKSPACE)
    ctx = WriteContext(workspace_id=WORKSPACE, actor_id="a", decision_reason="bulk")
    claims = make_collection(ctx, "claims")
    make_record(ctx, claims, "Expense: MacBook for Priya", amount=2400)
    search(text="laptop", mode="meaning")  # the single record is embedded
    release = threading.Event()
    compute = embeddings.compute_for  # what the background thread embeds with
    monkeypatch.setattr(embeddings, "compute_for", lambda ids: release.wait(30) and compute(ids))
    monkeypatch.setattr(index, "INLINE_CATCH_UP", 2)
    rows = [NewRecord(ctx=ctx, title=f"Laptop claim {n}", data={}) for n in range(4)]
    services.record_create_many(collection_id=claims.pk, rows=rows)
    page = search(text="laptop", mode="meaning")
    assert page["mode"] == "meaning" and page["note"].startswith("4 records written in bulk")
    matched = {item["title"]: item["matched"] for item in page["records"]}
    assert matched["Expense: MacBook for Priya"] == "meaning"
    assert {matched[f"Laptop claim {n}"] for n in range(4)} == {"words"}
    # One of them stored meanwhile: the vectors are reloaded for it only once they are older
    # than PENDING_RELOAD_S (a reload of a large workspace costs seconds).
    claim = Record.objects.get(title="Laptop claim 0")
    with transaction.atomic():
        embeddings.save_embeddings(compute([claim.pk]))
    page = search(text="laptop", mode="meaning")
    assert {i["title"]: i["matched"] for i in page["records"]}["Laptop claim 0"] == "words"
    monkeypatch.setattr(index, "PENDING_RELOAD_S", 0.0)
    page = search(text="laptop", mode="meaning")
    assert {i["title"]: i["matched"] for i in page["records"]}["Laptop claim 0"] == "both"
    assert page["note"].startswith("3 records written in bulk")
    release.set()
    wait_until(lambda: not embeddings.catching_up(WORKSPACE), "the background catch-up")
    page = search(text="laptop", mode="meaning")
    assert "note" not in page and {item["matched"] for item in page["records"]} == {
        "meaning",
        "both",
    }


def test_a_search_embeds_no_more_than_a_page_of_missing_records_itself(ctx, monkeypatch):
    claims = make_collection(ctx, "claims")
    rows = [NewRecord(ctx=ctx, title=f"Laptop claim {n}", data={}) for n in range(25)]
    services.record_create_many(collection_id=claims.pk, rows=rows)  # no commit: no thread
    started: list[str] = []
    monkeypatch.setattr(index, "start_catch_up", started.append)
    page = search(text="laptop", mode="meaning")
    assert embeddings.INLINE_CATCH_UP <= 20 and started == [WORKSPACE]
    assert page["note"].startswith("25 records") and not RecordEmbedding.objects.exists()


# --- the cached vectors follow this process's single-record writes ------------------------------


def test_a_committed_write_patches_the_cached_vectors_without_a_reload(
    ctx, decisions, django_capture_on_commit_callbacks
):
    search(text="laptop", mode="meaning")  # loads the workspace's vectors
    with django_capture_on_commit_callbacks(execute=True):
        added = make_record(ctx, decisions["collection"], "Notebook computer refund for Ana")
    cached = held_vectors()
    assert added.pk in cached.record_ids and cached.key == index.current_key(WORKSPACE)
    with django_capture_on_commit_callbacks(execute=True):
        services.record_archive(ctx=ctx, record_id=decisions["laptop"].pk, expected_version=1)
    cached = held_vectors()
    assert decisions["laptop"].pk not in cached.record_ids
    assert cached.key == index.current_key(WORKSPACE)
    page = search(text="laptop reimbursement", mode="meaning")
    assert titles(page)[0] == "Notebook computer refund for Ana"
    assert held_vectors() is cached  # served from the patched vectors


def test_a_write_the_cache_cannot_follow_drops_it(
    ctx, decisions, django_capture_on_commit_callbacks
):
    search(text="laptop", mode="meaning")
    services.record_create_many(
        collection_id=decisions["collection"].pk,
        rows=[NewRecord(ctx=ctx, title="Bulk laptop claim", data={})],
    )
    with django_capture_on_commit_callbacks(execute=True):
        make_record(ctx, decisions["collection"], "Written after the bulk one")
    assert not index.holds(WORKSPACE)
    assert "Bulk laptop claim" in titles(search(text="laptop claim", mode="meaning"))


def test_a_record_below_the_similarity_floor_is_not_offered_by_meaning(ctx, decisions):
    from records.selectors import meaning_search

    question = "banana smoothie recipe"
    page = search(text=question, mode="meaning")
    vectors = index.scope_vectors(WORKSPACE)
    assert vectors is not None
    scored = dict(
        vectors.nearest(
            index.query_vector(question), collection_id=None, limit=100, min_similarity=-1.0
        )
    )
    offered = {item["record_id"]: item for item in page["records"]}
    assert all(item["similarity"] >= meaning_search.MIN_SIMILARITY for item in offered.values())
    below = [pk for pk, similarity in scored.items() if similarity < meaning_search.MIN_SIMILARITY]
    assert below, "some record of the fixture is unrelated to the question"
    assert not set(below) & set(offered)


def test_creates_append_into_the_cached_vectors_room_and_earlier_views_are_unchanged(
    ctx, decisions, django_capture_on_commit_callbacks
):
    search(text="laptop", mode="meaning")
    loaded = held_vectors()
    loaded_rows = loaded.matrix[: len(loaded)].copy()
    views = []
    for n in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            make_record(ctx, decisions["collection"], f"Refund for a lost charger {n}", amount=n)
        views.append(held_vectors())
    # The first create copied the vectors into a buffer with room; the next ones wrote into it.
    assert views[0].matrix is not loaded.matrix and len(views[0].matrix) > len(views[0])
    assert views[1].matrix is views[0].matrix and views[2].matrix is views[0].matrix
    assert [len(view) for view in views] == [5, 6, 7]
    assert (loaded.matrix[: len(loaded)] == loaded_rows).all()
    question = index.query_vector("reimbursement for a phone charger")
    patched = views[-1].nearest(question, collection_id=None, limit=7, min_similarity=-1.0)
    index.forget_cached()
    fresh = index.scope_vectors(WORKSPACE)
    assert fresh is not None and fresh.key == views[-1].key
    reloaded = fresh.nearest(question, collection_id=None, limit=7, min_similarity=-1.0)
    assert [pk for pk, _ in patched] == [pk for pk, _ in reloaded]
    assert [s for _, s in patched] == pytest.approx([s for _, s in reloaded], abs=1e-4)
    earlier = views[0].nearest(question, collection_id=None, limit=7, min_similarity=-1.0)
    assert len(earlier) == 5  # the view taken after the first create still has five rows


def held_vectors() -> index.ScopeVectors:
    """The vectors this process holds for the test's workspace (there must be some)."""
    vectors = index.cached(WORKSPACE)
    assert vectors is not None
    return vectors


# --- confidence: strong, weak or none ------------------------------------------------------------


def test_every_page_by_meaning_says_how_confident_it_is(ctx, decisions):
    page = search(text="what did we decide about sign-in", mode="meaning")
    assert page["confidence"] in ("strong", "weak", "none")


@pytest.mark.parametrize(
    ("best", "typical", "count", "by_words", "expected"),
    [
        (0.45, 0.0, 1_000, [], "strong"),
        (0.25, 0.0, 1_000, [], "weak"),
        (0.15, 0.0, 1_000, [], "none"),
        (0.15, 0.0, 1_000, ["a record with every word"], "weak"),
        (0.25, -0.03, 1_000, [], "none"),  # far from the store as a whole
        (0.22, 0.0, 100, [], "weak"),
        (0.22, 0.0, 100_000, [], "none"),  # more records, a higher best by chance
    ],
)
def test_confidence_weighs_the_best_against_the_store_and_its_size(
    best, typical, count, by_words, expected
):
    assert confidence(best, typical, count, by_words) == expected
