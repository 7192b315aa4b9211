"""A cached name list brought up to date by the changes alone is the list built afresh.

A seeded sequence of creates, renames, alias changes, archivals and removals, in two
collections; after each, the cached list of each scope (one collection, the workspace) must hold
exactly the names a fresh load holds, with its exact and word indexes agreeing, and it must
have got there by replacing the changed records rather than reloading every name.
"""

from __future__ import annotations

import random

import pytest

from records import services
from records.ids import new_id
from records.models import NameChange, Record
from tests.conftest import WORKSPACE, make_collection, make_record
from workflow.models import StoredNameList
from workflow.names import cache as names_cache
from workflow.names import view as names_view
from workflow.names.cache import scope_names
from workflow.names.match import match_names
from workflow.names.view import ScopeNames

WORDS = ["kirat", "rahul", "priya", "sharma", "backend", "junior", "lead", "ops", "north"]


@pytest.fixture(autouse=True)
def fresh_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def live_entries(names: ScopeNames) -> list[tuple[str, str, bool]]:
    return sorted(names.entry(i) for i in names.live_indices())


def assert_indexes_agree(names: ScopeNames) -> None:
    """The exact and whole-word lookups (string search over the stored part, indexes over the
    appended part) find what a walk over every live entry finds."""
    live = names.live_indices()
    for name in {names.names[i] for i in live} | {"kirat", "rahul sharma"}:
        assert names.exact_indices(name) == sorted(i for i in live if names.names[i] == name)
    for query in ("kirat", "rahul", "junior backend", "sharma kirat", "ops"):
        padded = f" {query} "
        assert names.word_hits(query) == [i for i in live if padded in f" {names.names[i]} "]


def title(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, rng.randint(1, 3))).title()


@pytest.mark.parametrize("floor", [100, 4])  # 4: the dead entries pile up and force rebuilds
@pytest.mark.parametrize("restarts", [False, True])  # True: lists stored, and read back often
def test_updates_from_the_changes_match_a_fresh_load(ctx, monkeypatch, floor, restarts):
    monkeypatch.setattr(names_cache, "PATCH_FLOOR", floor)
    monkeypatch.setattr(names_view, "PATCH_FLOOR", floor)
    if restarts:
        monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    rng = random.Random(7)
    collections = [make_collection(ctx, "people"), make_collection(ctx, "openings")]
    records = [make_record(ctx, rng.choice(collections), title(rng)) for _ in range(30)]
    scopes = [collections[0].pk, None]
    for scope in scopes:
        scope_names(WORKSPACE, scope)
    real_load = names_cache._load
    loads = count_loads(monkeypatch)

    for step in range(60):
        record = Record.objects.get(pk=rng.choice(records).pk)
        action = rng.choice(["create", "rename", "alias", "unalias", "archive", "remove"])
        if action == "create":
            records.append(make_record(ctx, rng.choice(collections), title(rng)))
        elif action == "rename" and record.archived_at is None:
            services.record_rename(
                ctx=ctx, record_id=record.pk, title=title(rng), expected_version=record.version
            )
        elif action == "alias" and record.archived_at is None:
            services.record_alias_add(
                ctx=ctx,
                record_id=record.pk,
                alias=f"{title(rng)} {step}",
                expected_version=record.version,
            )
        elif action == "unalias" and (alias := record.aliases.first()) is not None:
            services.record_alias_remove(
                ctx=ctx,
                record_id=record.pk,
                alias=alias.alias,
                expected_version=record.version,
            )
        elif action == "archive" and record.archived_at is None:
            services.record_archive(ctx=ctx, record_id=record.pk, expected_version=record.version)
        elif action == "remove" and len(records) > 10:
            # No service deletes a record; a restore can. The list must notice it is gone.
            Record.objects.filter(pk=record.pk).delete()
            records = [r for r in records if r.pk != record.pk]
        if restarts and step % 7 == 0:
            names_cache.clear_cache()  # the next use reads the stored list and the log since
        for scope in scopes:
            cached = scope_names(WORKSPACE, scope)
            fresh = real_load(WORKSPACE, scope, cached.revision)
            assert live_entries(cached) == live_entries(fresh), (step, action, scope)
            assert cached.record_count == fresh.record_count
            assert_indexes_agree(cached)
            for query in ("kirat", "rahul sharma", "junior backend"):
                found = {(m.record_id, m.display) for m in match_names(cached, query)}
                assert found == {(m.record_id, m.display) for m in match_names(fresh, query)}
    # Each scope rebuilt whole only when its dead entries piled up, not on every change.
    assert len(loads) < 20, f"{len(loads)} full reloads for 60 changes"
    assert (len(loads) > 0) is (floor < 100)


def test_a_write_that_moved_the_counter_but_no_name_keeps_the_list(ctx, monkeypatch):
    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    first = scope_names(WORKSPACE, people.pk)
    monkeypatch.setattr(names_cache, "_load", lambda *a: pytest.fail("reloaded every name"))
    services.record_rename(ctx=ctx, record_id=kirat.pk, title="Kirat S", expected_version=1)
    renamed = scope_names(WORKSPACE, people.pk)
    assert renamed.revision > first.revision
    assert [m.display for m in match_names(renamed, "kirat s") if m.exact] == ["Kirat S"]
    assert not [m for m in match_names(renamed, "kirat") if m.exact]
    assert [m.display for m in match_names(first, "kirat") if m.exact] == ["Kirat"], (
        "the list another thread may still be reading is left as it was"
    )


def test_a_committed_write_brings_the_lists_along_without_a_reload(
    ctx, monkeypatch, django_capture_on_commit_callbacks
):
    """A commit's own names reach the cached lists through the names log, as another
    process's would: the changed records' entries replaced, no scope read whole."""
    from tests.workflow.helpers import ok

    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    for index in range(30):
        make_record(ctx, people, f"Person {index}")
    for scope in (people.pk, None):
        scope_names(WORKSPACE, scope)
    real_load = names_cache._load

    def refuse(*args):
        raise AssertionError("the list reloaded instead of following the log")

    monkeypatch.setattr(names_cache, "_load", refuse)
    monkeypatch.setattr(names_cache, "_fresh", refuse)

    def commit(operation, arguments, review_ids):
        prepared = ok(
            "prepare_write",
            {
                "operation": operation,
                "arguments": arguments,
                "review_ids": review_ids,
                "decision_reason": "test",
            },
        )
        with django_capture_on_commit_callbacks(execute=True):
            ok("commit_write", {"action_id": prepared["action_id"]})

    def resolution(query, **scope):
        return ok("resolve_record", {"query": query, **scope})["resolution_id"]

    commit(
        "create_record",
        {"collection_id": people.pk, "title": "Nova Quill", "data": {}},
        [resolution("Nova Quill", collection_id=people.pk)],
    )
    # The resolutions after the create see the followed list: no scan (refuse would raise).
    commit(
        "rename_record",
        {"record_id": kirat.pk, "title": "Kirat Singh", "expected_version": 1},
        [resolution(kirat.pk), resolution("Kirat Singh", collection_id=people.pk)],
    )
    for scope in (people.pk, None):
        followed = scope_names(WORKSPACE, scope)
        assert live_entries(followed) == live_entries(real_load(WORKSPACE, scope, 0))
        assert_indexes_agree(followed)
        assert [m.display for m in match_names(followed, "nova quill") if m.exact] == ["Nova Quill"]
        assert [m.display for m in match_names(followed, "kirat singh") if m.exact] == [
            "Kirat Singh"
        ]
        assert not [m for m in match_names(followed, "kirat") if m.exact]


def test_a_commit_reads_no_audit_events(ctx, django_capture_on_commit_callbacks):
    """The written record IDs are handed to the name cache: the audit log, which grows with
    the workspace's whole history, is only ever appended to by a commit."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.workflow.helpers import ok

    people = make_collection(ctx, "people")
    for index in range(5):
        make_record(ctx, people, f"Person {index}")
    for scope in (people.pk, None):
        scope_names(WORKSPACE, scope)
    review = ok("resolve_record", {"query": "Nova Quill", "collection_id": people.pk})
    prepared = ok(
        "prepare_write",
        {
            "operation": "create_record",
            "arguments": {"collection_id": people.pk, "title": "Nova Quill", "data": {}},
            "review_ids": [review["resolution_id"]],
            "decision_reason": "test",
        },
    )
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        ok("commit_write", {"action_id": prepared["action_id"]})
    reads = [
        q["sql"]
        for q in queries.captured_queries
        if "records_auditevent" in q["sql"] and not q["sql"].lstrip().upper().startswith("INSERT")
    ]
    assert reads == [], "the commit read the audit log back"
    followed = scope_names(WORKSPACE, people.pk)
    assert [m.display for m in match_names(followed, "nova quill") if m.exact] == ["Nova Quill"]


class Untouchable(list):
    """A list that may be appended to and indexed, never walked or copied whole."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("the patch walked or copied the whole name list")

    __iter__ = __add__ = __reversed__ = copy = index = count = _refuse

    def __getitem__(self, key):
        if isinstance(key, slice):
            self._refuse()
        return super().__getitem__(key)


def test_a_patch_touches_only_the_changed_entries():
    size = 50_000
    first = ScopeNames.build(
        1, [(new_id(), f"Person {i}", False) for i in range(size)] + [("r9", "Person 9b", False)]
    )
    r7 = first.entry(7)[0]
    object.__setattr__(
        first,
        "base",
        names_view.Base(
            Untouchable(first.base.names),
            first.base.ids,
            Untouchable(first.base.displays),
            first.base.aliases,
            first.base.joined,
        ),
    )
    second = first.patched(2, {r7, "r9"}, [(r7, "Kirat Singh", False)])
    assert second is not None and second.base is first.base, "the base is shared, not copied"
    assert second.record_count == size and second.dead == {7, size}
    assert [second.entry(i)[1] for i in second.exact_indices("kirat singh")] == ["Kirat Singh"]
    assert second.exact_indices("person 7") == [] and second.exact_indices("person 9b") == []
    assert first.exact_indices("person 7") == [7], "the older snapshot reads what it read before"
    assert first.exact_indices("kirat singh") == []
    third = second.patched(3, {r7}, [(r7, "Kirat S", False)])
    assert third is not None and third.tail == ((r7, "Kirat S", False),)
    assert second.exact_indices("kirat singh") == [size + 1], "the second is left as it was"


def test_a_fresh_process_reads_the_stored_list_and_the_log_not_the_records(ctx, monkeypatch):
    """After a restart the list comes from one stored row plus the changes since it, and
    matches exactly as the list read from the records does, other processes' writes included."""
    monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    make_record(ctx, people, "Rahul Sharma")
    make_record(ctx, people, "Rahul Verma")
    make_record(ctx, people, "Expenses")
    scope_names(WORKSPACE, people.pk)  # built from the records, and stored
    stored = StoredNameList.objects.get(scope_key=f"names:{people.pk}")
    # Written as another process would: this one's cache never sees them happen.
    services.record_rename(ctx=ctx, record_id=kirat.pk, title="Kirat Singh", expected_version=1)
    make_record(ctx, people, "Priya")
    names_cache.clear_cache()  # the restart
    real_load = names_cache._load
    monkeypatch.setattr(names_cache, "_load", lambda *a: pytest.fail("read every record"))
    restarted = scope_names(WORKSPACE, people.pk)
    assert restarted.revision > stored.revision
    fresh = real_load(WORKSPACE, people.pk, restarted.revision)
    assert live_entries(restarted) == live_entries(fresh)
    assert restarted.record_count == fresh.record_count == 5
    assert_indexes_agree(restarted)
    for query in ("kriat singh", "rahul", "expneses", "priya", "kirat"):
        found = [(m.record_id, m.display, m.exact) for m in match_names(restarted, query)]
        assert found == [(m.record_id, m.display, m.exact) for m in match_names(fresh, query)]
    assert {m.display for m in match_names(restarted, "rahul")} == {"Rahul Sharma", "Rahul Verma"}


def test_a_gap_in_the_names_log_reads_the_records_instead(ctx, monkeypatch):
    """A counter moved with no log row (a load that went around the triggers) cannot be
    followed from the log: the list is read whole, never patched from a guess."""
    monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    make_record(ctx, people, "Kirat")
    scope_names(WORKSPACE, people.pk)
    make_record(ctx, people, "Abhishek")
    NameChange.objects.filter(key=f"names:{people.pk}").order_by("-revision")[:1].get().delete()
    loads = count_loads(monkeypatch)
    for restart in (False, True):  # the cached list, and a fresh process on the stored one
        if restart:
            names_cache.clear_cache()
        names = scope_names(WORKSPACE, people.pk)
        assert [m.display for m in match_names(names, "abhishek") if m.exact] == ["Abhishek"]
    assert len(loads) == 1, "the gap is read whole once; the list stored then serves the restart"


def test_a_stored_list_prunes_the_log_and_a_view_behind_it_reads_the_list(ctx, monkeypatch):
    """The log up to a stored list's revision is deleted when the list is stored; a view still
    behind that point (another process's, say) meets the gap and reads the stored list and the
    log after it, and answers as a fresh load does."""
    from records.counters import counter_values, names_key

    monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    rahul = make_record(ctx, people, "Rahul Sharma")
    make_record(ctx, people, "Expenses")
    key = names_key(people.pk)
    behind = scope_names(WORKSPACE, people.pk)  # built from the records, and stored
    assert not NameChange.objects.filter(key=key, revision__lte=behind.revision).exists()
    services.record_rename(ctx=ctx, record_id=kirat.pk, title="Kirat Singh", expected_version=1)
    # Another process builds the list at this revision and stores it: the rename's row goes.
    stored_at = counter_values(WORKSPACE, [key])[key]
    assert NameChange.objects.filter(key=key, revision=stored_at).exists()
    names_cache._store(WORKSPACE, people.pk, names_cache._load(WORKSPACE, people.pk, stored_at))
    assert not NameChange.objects.filter(key=key, revision__lte=stored_at).exists()
    services.record_rename(ctx=ctx, record_id=rahul.pk, title="Rahul Verma", expected_version=1)
    names_cache._cache.put((WORKSPACE, people.pk), behind.revision, behind)  # from before
    loads = count_loads(monkeypatch)
    caught_up = scope_names(WORKSPACE, people.pk)
    assert loads == [], "the stored list and the log after it, not the records"
    fresh = names_cache._load(WORKSPACE, people.pk, caught_up.revision)
    assert live_entries(caught_up) == live_entries(fresh)
    for query in ("kirat singh", "kirat", "rahul verma", "rahul sharma"):
        found = [(m.record_id, m.display, m.exact) for m in match_names(caught_up, query)]
        assert found == [(m.record_id, m.display, m.exact) for m in match_names(fresh, query)]
    assert [m.display for m in match_names(caught_up, "kirat singh") if m.exact] == ["Kirat Singh"]
    assert not [m for m in match_names(caught_up, "rahul sharma") if m.exact]


def test_the_names_log_holds_one_row_per_counter_move(ctx):
    from records.counters import counter_values, names_key
    from records.name_log import names_written_now

    def names_written(since: int, until: int, *, limit: int) -> set[str] | None:
        written = names_written_now(WORKSPACE, None, key, since, until, limit=limit)
        return None if written is None else written[0]

    people = make_collection(ctx, "people")
    kirat = make_record(ctx, people, "Kirat")
    key = names_key(people.pk)
    before = counter_values(WORKSPACE, [key])[key]
    services.record_rename(ctx=ctx, record_id=kirat.pk, title="Kirat S", expected_version=1)
    priya = make_record(ctx, people, "Priya")
    after = counter_values(WORKSPACE, [key])[key]
    assert names_written(before, after, limit=10) == {kirat.pk, priya.pk}
    assert names_written(after - 1, after, limit=10) == {priya.pk}
    assert names_written(after, after, limit=10) == set()
    assert names_written(0, after, limit=1) is None, "more than the limit"
    NameChange.objects.filter(key=key, revision=after).delete()
    assert names_written(before, after, limit=10) is None, "a gap is no answer"


def test_the_log_and_the_current_names_read_in_one_statement_agree_with_the_orm(ctx):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from records.counters import counter_values, names_key
    from records.name_log import names_written_now

    people = make_collection(ctx, "people")
    others = make_collection(ctx, "others")
    kirat = make_record(ctx, people, "Kirat")
    make_record(ctx, people, "Untouched")
    key = names_key(people.pk)
    before = counter_values(WORKSPACE, [key])[key]
    kirat = services.record_alias_add(
        ctx=ctx, record_id=kirat.pk, alias="Kirat S", expected_version=kirat.version
    )
    services.record_alias_add(
        ctx=ctx, record_id=kirat.pk, alias="K Singh", expected_version=kirat.version
    )
    priya = make_record(ctx, people, "Priya")
    moved = make_record(ctx, people, "Moved Away")
    # Moved out of the collection (the triggers log it for both collections' counters).
    Record.objects.filter(pk=moved.pk).update(collection_id=others.pk)
    for collection_id in (people.pk, None):  # a collection, and the whole workspace
        key = names_key(collection_id)
        after = counter_values(WORKSPACE, [key])[key]
        since = before if collection_id else 0
        with CaptureQueriesContext(connection) as queries:
            written = names_written_now(WORKSPACE, collection_id, key, since, after, limit=100)
        assert len(queries) == 1
        assert written is not None
        changed, entries = written
        logged = NameChange.objects.filter(
            workspace_id=WORKSPACE, key=key, revision__gt=since, revision__lte=after
        )
        assert changed == set(logged.values_list("record_id", flat=True))
        assert {priya.pk, kirat.pk, moved.pk} <= changed
        assert entries == names_cache._current_names(WORKSPACE, collection_id, changed)
        in_scope = {(rid, text, alias) for rid, text, alias in entries}
        assert (kirat.pk, "K Singh", True) in in_scope
        assert any(rid == moved.pk for rid, _, _ in in_scope) == (collection_id is None)
    key = names_key(people.pk)
    after = counter_values(WORKSPACE, [key])[key]
    assert names_written_now(WORKSPACE, people.pk, key, 0, after, limit=1) is None
    assert names_written_now(WORKSPACE, people.pk, key, after, after, limit=1) == (set(), [])
    NameChange.objects.filter(key=key, revision=after).delete()
    assert names_written_now(WORKSPACE, people.pk, key, before, after, limit=100) is None


def count_loads(monkeypatch) -> list[tuple]:
    """The name list's whole reads from here on: one entry per `_load` call, with its arguments."""
    loads: list[tuple] = []
    real_load = names_cache._load

    def counted_load(*args):
        loads.append(args)
        return real_load(*args)

    monkeypatch.setattr(names_cache, "_load", counted_load)
    return loads


def test_a_list_read_from_its_stored_row_matches_as_the_list_it_was_stored_from():
    """from_stored takes the joined names column as the lookup string (no join per entry): the
    stored view must find the same exact and whole-word matches, aliases included."""
    r1, r2, r3 = new_id(), new_id(), new_id()
    built = ScopeNames.build(
        7,
        [
            (r1, "Kirat Sharma", False),
            (r2, "Rahul Sharma", False),
            (r2, "Rahul S", True),
            (r3, "Priya", False),
        ],
    )
    columns = built.stored_form()
    assert columns is not None
    stored = ScopeNames.from_stored(StoredNameList(revision=7, **columns))
    assert stored is not None
    assert stored.base.joined == built.base.joined
    assert [stored.entry(i)[2] for i in range(4)] == [False, False, True, False]
    assert stored.record_count == built.record_count == 3
    for query in ("rahul sharma", "rahul s", "sharma", "priya", "kirat"):
        assert stored.exact_indices(query) == built.exact_indices(query), query
        assert stored.word_hits(query) == built.word_hits(query), query
    assert [m.record_id for m in match_names(stored, "rahul")] == [
        m.record_id for m in match_names(built, "rahul")
    ]


def test_an_empty_stored_list_reads_as_an_empty_list():
    empty = ScopeNames.from_stored(
        StoredNameList(revision=3, record_ids=b"", names="", displays="", aliases="")
    )
    assert empty is not None
    assert empty.names == [] and empty.length == 0 and empty.base.joined == "\x1f\x1f"
    assert empty.exact_indices("") == [] and empty.word_hits("kirat") == []
