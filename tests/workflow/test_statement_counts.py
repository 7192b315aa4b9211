"""Statements per call on the guarded write path, pinned: a repeat read creeping back fails here.

The counts are taken inside the test transaction (no BEGIN/COMMIT), with the name list warm, on
each backend; PostgreSQL differs where it locks rows SQLite's single writer needs no lock for.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.workflow.helpers import ok
from workflow.names import cache as names_cache
from workflow.names.cache import scope_names
from workflow.names.match import match_names, match_names_many

# resolve_record, prepare_write, commit_write of a create (with its follow-up review); the
# figures before these were pinned: 8, 16, 29 (SQLite) and 8, 18, 29 (PostgreSQL). A resolve
# catches up on the names log in one statement (records.name_log.names_written_now), not three.
# The commit stores no embedding in a process that does not search the workspace by meaning
# (records.meaning.embeddings): one statement fewer than 24 and 23. A commit on SQLite no
# longer reads the names counters for the cached lists (they follow the log): 23 to 22. The
# knock-on sweep's counter reads around a commit (workflow.knock_on) add three.
CREATE = {"sqlite": (4, 14, 25), "postgresql": (4, 15, 25)}
CONTEXT = 4  # was 5: the links of both directions are one statement
# batch_read in the reporting shape, and each of its searches with contexts (before: 24 and 6,
# the contexts' links by two ORM window queries).
BATCH_READ = 21
SEARCH_WITH_CONTEXTS = 5
# prepare_import, commit_import of 10 rows and 10 links (SQLite's commit was 25, as above).
IMPORT = {"sqlite": (18, 27), "postgresql": (19, 27)}


@pytest.fixture(autouse=True)
def fresh_name_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def statements(name, arguments):
    with CaptureQueriesContext(connection) as captured:
        reply = ok(name, arguments)
    return reply, [q["sql"] for q in captured.captured_queries]


def guarded_create(collection_id, title):
    review, resolve = statements("resolve_record", {"query": title, "collection_id": collection_id})
    prepared, prepare = statements(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user asked",
        },
    )
    committed, commit = statements("commit_write", {"action_id": prepared["action_id"]})
    assert committed["status"] == "committed"
    return resolve, prepare, commit


def test_a_guarded_create_costs_its_pinned_statements(hiring):
    guarded_create(hiring.people.pk, "Warm Up Person")  # loads the name list
    resolve, prepare, commit = guarded_create(hiring.people.pk, "Nova Quill")
    assert (len(resolve), len(prepare), len(commit)) == CREATE[connection.vendor], (
        resolve,
        prepare,
        commit,
    )
    # The dry run computes no embedding (its row would be rolled back) and reads no aliases
    # of a record it has just made; the ticket reuses the names list's revision.
    assert not [sql for sql in prepare + commit if "recordembedding" in sql]
    assert not [sql for sql in prepare + commit if "recordalias" in sql]
    assert not [sql for sql in resolve if "revisioncounter" in sql][1:], "one counter read"
    assert not [sql for sql in resolve + commit if "records_workspace" in sql]


def test_get_record_context_costs_its_pinned_statements(hiring):
    _, context = statements("get_record_context", {"record_id": hiring.kirat.pk})
    assert len(context) == CONTEXT, context


def test_an_import_costs_its_pinned_statements(hiring):
    keys = [f"r{i}" for i in range(10)]
    rows = [{"key": k, "title": f"Zork{i} Blah{i}", "data": {"n": i}} for i, k in enumerate(keys)]
    links = [
        {"source": {"row": k}, "relationship_type": "next", "target": {"row": keys[(i + 1) % 10]}}
        for i, k in enumerate(keys)
    ]
    ok(
        "prepare_import",
        {"collection_id": hiring.people.pk, "rows": rows[:1], "decision_reason": "warm"},
    )
    prepared, prepare = statements(
        "prepare_import",
        {"collection_id": hiring.people.pk, "rows": rows, "links": links, "decision_reason": "x"},
    )
    flagged = {
        r["key"]: {"decision": "create_anyway", "clarification": "new"}
        for r in prepared["rows"]
        if r["status"] != "clean"
    }
    arguments = {"action_id": prepared["action_id"], **({"decisions": flagged} if flagged else {})}
    committed, commit = statements("commit_import", arguments)
    assert committed["status"] == "committed"
    assert (len(prepare), len(commit)) == IMPORT[connection.vendor], (prepare, commit)


def test_matching_many_queries_at_once_answers_as_one_at_a_time(hiring):
    names = scope_names(hiring.people.workspace_id, None)
    queries = [
        (q, q.title())
        for q in ("kirat", "kriat", "rahul", "rahul sharma", "abhishek", "ab", "", "nobody here")
    ]
    many = match_names_many(names, queries)
    assert many == [match_names(names, normalized, shown) for normalized, shown in queries]
    assert any(m for m in many[1] if not m.exact), "a typo is found through the batched scan"


def test_a_create_calls_the_model_in_its_preview_not_under_the_commit_lock(hiring, monkeypatch):
    from records.meaning import model
    from records.meaning.embeddings import embedding_rows
    from records.models import Record, RecordEmbedding

    real = model._embed
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(model, "_embed", counting)
    model._embed_recent.cache_clear()
    # Writes embed only where the workspace is searched by meaning: make this process one.
    ok("search_records", {"text": "engineer", "mode": "meaning"})
    calls.clear()
    review = ok("resolve_record", {"query": "Nova Quill", "collection_id": hiring.people.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": hiring.people.pk, "title": "Nova Quill", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user asked",
        },
    )
    assert len(calls) == 1, "the preview embeds the record it would write"
    committed = ok("commit_write", {"action_id": prepared["action_id"]})
    assert len(calls) == 1, "the commit finds the preview's vectors"
    record_id = committed["result"]["record"]["record_id"]
    stored = RecordEmbedding.objects.get(record_id=record_id)
    model._embed_recent.cache_clear()
    again = embedding_rows([Record.objects.get(pk=record_id)])[0]
    assert len(calls) == 2, "computed afresh"
    assert (bytes(stored.vector), stored.scale) == (bytes(again.vector), again.scale)


def reporting_batch(collection_id, record_id, searches=3):
    search = {"operation": "search_records", "collection_id": collection_id, "limit": 20}
    return {
        "requests": [{**search, "include_context": True}] * searches
        + [
            {"operation": "list_collections"},
            {"operation": "traverse", "start_record_id": record_id, "max_nodes": 30},
        ]
    }


def test_a_reporting_batch_read_costs_its_pinned_statements(hiring):
    # The seed's reporting shape: three searches with contexts, a list and a traverse. The
    # one-search batch goes first so the connection's session settings are in place.
    _, one = statements("batch_read", reporting_batch(hiring.people.pk, hiring.kirat.pk, 1))
    reply, batch = statements("batch_read", reporting_batch(hiring.people.pk, hiring.kirat.pk))
    assert all("error" not in item for item in reply["items"])
    assert reply["items"][0]["result"]["contexts"], "the search found records to give contexts"
    assert len(batch) == BATCH_READ, batch
    # A search with contexts: collection check, page, records, aliases, links both ways.
    assert (len(batch) - len(one)) == 2 * SEARCH_WITH_CONTEXTS, batch
    assert len([sql for sql in batch if "ROW_NUMBER" in sql]) == 3, "links: one query a search"
