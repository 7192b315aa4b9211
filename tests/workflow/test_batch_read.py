"""batch_read: mixed reads, labelled, budgeted, size-capped, from one snapshot."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection

from records.snapshot import read_snapshot
from tests.workflow.helpers import ok, refused
from workflow import batch_read as batch_read_module


def test_mixed_reads_come_back_labelled_in_order(hiring):
    result = ok(
        "batch_read",
        {
            "requests": [
                {"operation": "list_collections"},
                {
                    "operation": "search_records",
                    "collection_id": hiring.people.pk,
                    "limit": 2,
                    "include_context": True,
                },
                {"operation": "get_record_context", "record_id": hiring.kirat.pk},
                {"operation": "traverse", "start_record_id": hiring.kirat.pk, "max_nodes": 10},
                {
                    "operation": "get_record_context",
                    "record_id": "0" * 8 + "-0000-4000-8000-" + "0" * 12,
                },
            ]
        },
    )
    items = result["items"]
    # In the order asked, each its result or its error: no index, ok or operation echoed.
    assert [list(i) for i in items] == [["result"]] * 4 + [["error"]]
    search = items[1]["result"]
    assert search["count"] == 2 and search["has_more"] is True and search["next_cursor"]
    assert set(search["contexts"]) == {r["record_id"] for r in search["records"]}
    for record in search["records"]:
        assert "data_preview" not in record and isinstance(record["data"], dict)
        assert {"status", "version"} <= set(record) and record.get("aliases") != [], "or none"
        context = search["contexts"][record["record_id"]]
        assert set(context) == {"links", "events_omitted"}, "the record is not said twice"
        assert {"outgoing", "incoming"} <= set(context["links"])
    context = items[2]["result"]
    assert context["record"]["title"] == "Kirat", context
    assert items[4]["error"]["code"] == "NOT_FOUND"


def test_budget_is_shared_and_refused_whole(hiring):
    error = refused(
        "batch_read",
        {
            "requests": [
                {"operation": "search_records", "limit": 60},
                {"operation": "traverse", "start_record_id": hiring.kirat.pk, "max_nodes": 50},
            ]
        },
        "INVALID_INPUT",
    )
    assert error["details"]["cost"] == 110


def test_unknown_arguments_are_refused_not_dropped(hiring):
    error = refused(
        "batch_read",
        {"requests": [{"operation": "search_records", "colection_id": hiring.people.pk}]},
        "INVALID_INPUT",
    )
    assert "colection_id" in error["message"]


def test_oversized_answer_is_refused_with_item_sizes(hiring, monkeypatch):
    monkeypatch.setattr(batch_read_module, "MAX_RESPONSE_BYTES", 500)
    error = refused(
        "batch_read",
        {"requests": [{"operation": "list_collections"}, {"operation": "list_collections"}]},
        "INVALID_INPUT",
    )
    assert len(error["details"]["item_bytes"]) == 2


def test_the_size_cap_counts_utf8_bytes_not_ascii_escapes(ctx, monkeypatch):
    """Cyrillic is two bytes a letter in the reply and six as a JSON escape: the cap counts
    what the client receives, so such text fits up to the cap, not a third of it."""
    from tests.conftest import make_collection, make_record

    notes = make_collection(ctx, "заметки")
    for index in range(10):
        make_record(ctx, notes, f"Заметка {index}", text="Привет, мир! " * 400)
    search = {"operation": "search_records", "collection_id": notes.pk, "limit": 10}
    request = {"requests": [{**search, "include_context": True}]}
    monkeypatch.setattr(batch_read_module, "MAX_RESPONSE_BYTES", 200_000)

    answer = ok("batch_read", request)["items"][0]

    utf8 = len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode())
    escaped = len(json.dumps(answer))
    assert utf8 < 200_000 < escaped, (utf8, escaped)
    # Past the cap in UTF-8 bytes it is still refused, with the sizes the client would get.
    monkeypatch.setattr(batch_read_module, "MAX_RESPONSE_BYTES", utf8 - 1)
    error = refused("batch_read", request, "INVALID_INPUT")
    assert error["details"]["item_bytes"] == [utf8]


@pytest.mark.django_db(transaction=True)
def test_snapshot_does_not_see_a_concurrent_write(tmp_path, settings):
    # The reads in one batch see one snapshot even when a writer commits in between.
    from records.models import Record
    from records.services import WriteContext, workspace_ensure
    from tests.conftest import make_collection, make_record

    if connection.vendor == "sqlite" and "memory" in str(connection.settings_dict["NAME"]):
        pytest.skip("an in-memory SQLite test database has no second connection to race")
    workspace_ensure("local")
    ctx = WriteContext(workspace_id="local", actor_id="t")
    people = make_collection(ctx, "people")
    make_record(ctx, people, "Kirat")
    with read_snapshot():
        before = Record.objects.count()

        errors = []

        def writer():
            try:
                make_record(ctx, people, "Abhishek")
            except Exception as exc:  # reported below; a thread's exception is otherwise lost
                errors.append(exc)
            finally:
                connection.close()

        thread = threading.Thread(target=writer)
        thread.start()
        thread.join()
        assert not errors, errors
        assert Record.objects.count() == before
    assert Record.objects.count() == before + 1
