"""A prepare's dry run holds no counter row: it never queues behind a commit's lock.

PostgreSQL only: SQLite runs one write transaction at a time whatever is locked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from records import services
from records.counters import counter_values, lock_counters, names_key
from records.dry_run import counters_left_alone
from records.models import CollectionCountChange, NameChange, Record
from records.selectors.active_counts import active_counts
from tests.conftest import make_collection
from tests.mcp_client import call_tool
from tests.polling import wait_until
from tests.workflow.helpers import ok
from workflow.models import PreparedAction

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _prepare_create(collection_id: str, title: str) -> dict:
    review = ok("resolve_record", {"query": title, "collection_id": collection_id})
    return call_tool(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": collection_id, "title": title, "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "the user asked",
        },
    )


def _prepare_while_held(collection_id: str, hold: Callable[[], object], what: str) -> dict:
    """Prepare "Charlie Brown" in the collection while another thread's open transaction has run
    `hold` (and so holds its locks); the prepare must finish before that transaction ends."""
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        try:
            with transaction.atomic():
                hold()
                held.set()
                release.wait(60)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_until(held.is_set, f"the writer to lock {what}")
        done: list[dict] = []

        def preparer() -> None:
            try:
                done.append(_prepare_create(collection_id, "Charlie Brown"))
            finally:
                connection.close()

        threading.Thread(target=preparer).start()
        wait_until(lambda: done, f"the prepare to finish while {what} is locked")
        return done[0]
    finally:
        release.set()
        thread.join()


def test_a_prepare_completes_while_a_writer_holds_the_collections_names_counter():
    services.workspace_ensure("local")
    ctx = services.WriteContext(workspace_id="local", actor_id="local-agent")
    people = make_collection(ctx, "people")
    keys = [names_key(people.pk), names_key(None)]
    # A commit in progress: the counters locked until it ends.
    prepared = _prepare_while_held(people.pk, lambda: lock_counters("local", keys), "the counters")
    assert prepared["ok"], prepared
    stored = PreparedAction.objects.get(pk=prepared["result"]["action_id"])
    assert "Charlie Brown" in str(stored.preview)  # the dry run ran while the counters were held
    before = counter_values("local", keys)
    assert not Record.objects.filter(title="Charlie Brown").exists()
    committed = ok("commit_write", {"action_id": prepared["result"]["action_id"]})
    assert committed["status"] == "committed"
    after = counter_values("local", keys)  # the real write still moves both, and logs them
    assert all(after[key] == before[key] + 1 for key in keys), (before, after)
    record_id = committed["result"]["record"]["record_id"]
    assert NameChange.objects.filter(record_id=record_id).count() == 2


def test_a_dry_run_inside_a_transaction_leaves_the_transactions_own_writes_counted():
    services.workspace_ensure("local")
    ctx = services.WriteContext(workspace_id="local", actor_id="local-agent")
    people = make_collection(ctx, "people")
    key = names_key(people.pk)

    with transaction.atomic():
        start = counter_values("local", [key])[key]
        with transaction.atomic(), counters_left_alone():  # left normally: switched off
            services.record_create(ctx=ctx, collection_id=people.pk, title="A", data={})
        assert counter_values("local", [key])[key] == start
        try:
            with transaction.atomic(), counters_left_alone():
                services.record_create(ctx=ctx, collection_id=people.pk, title="B", data={})
                raise RuntimeError("roll the dry run back")
        except RuntimeError:
            pass
        services.record_create(ctx=ctx, collection_id=people.pk, title="C", data={})
        assert counter_values("local", [key])[key] == start + 1


def test_a_prepare_completes_while_a_writer_holds_the_collections_active_count():
    services.workspace_ensure("local")
    ctx = services.WriteContext(workspace_id="local", actor_id="local-agent")
    people = make_collection(ctx, "people")
    services.record_create(ctx=ctx, collection_id=people.pk, title="Ann Lee", data={})
    # A record written, not yet committed: the count row is locked.
    prepared = _prepare_while_held(
        people.pk,
        lambda: services.record_create(ctx=ctx, collection_id=people.pk, title="Bo Chen", data={}),
        "the count row",
    )
    assert prepared["ok"], prepared
    assert active_counts("local", [people.pk]) == {people.pk: 2}
    ok("commit_write", {"action_id": prepared["result"]["action_id"]})
    assert active_counts("local", [people.pk]) == {people.pk: 3}
    assert not CollectionCountChange.objects.exists()
