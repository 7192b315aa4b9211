"""The stored name list's compact layout: what is stored reads back entry for entry, a list
read from it is patched as a built one is, and a row that does not read back whole is rebuilt.

The record IDs are packed 16 bytes each, the names and displays joined (a display its name
title-cased gives back stored empty) and the alias flags kept as stored (workflow.names.view);
these tests check every entry, not a sample.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from records import services
from records.ids import new_id
from records.models import Record
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.workflow.test_name_index_updates import count_loads
from workflow.models import StoredNameList
from workflow.models.name_lists import NAME_LIST_LAYOUT
from workflow.names import cache as names_cache
from workflow.names.cache import scope_names
from workflow.names.match import match_names
from workflow.names.view import SEP, ScopeNames

STEP = 64
SIZE = 5 * STEP + 7


@pytest.fixture(autouse=True)
def fresh_cache():
    names_cache.clear_cache()
    yield
    names_cache.clear_cache()


def entries(size: int = SIZE) -> list[tuple[str, str, bool]]:
    """Titles and aliases of varied length, non-ASCII among them, an alias every fifth."""
    rows: list[tuple[str, str, bool]] = []
    for i in range(size):
        record_id = rows[-1][0] if i % 5 == 4 else new_id()
        display = f"Zoë Müller {i}" if i % 3 == 0 else f"{'Rahul ' * (i % 4)}Sharma {i}"
        rows.append((record_id, display, i % 5 == 4))
    return rows


def every_entry(names: ScopeNames) -> list[tuple[str, str, bool, str]]:
    return [(*names.entry(i), names.names[i]) for i in names.live_indices()]


def assert_matches_agree(one: ScopeNames, other: ScopeNames) -> None:
    for query in ("zoe muller 3", "rahul", "sharma 17", "rahul sharma 301", "shrama 42"):
        assert [(m.record_id, m.display, m.is_alias, m.exact) for m in match_names(one, query)] == [
            (m.record_id, m.display, m.is_alias, m.exact) for m in match_names(other, query)
        ], query


def stored_copy(names: ScopeNames, revision: int | None = None) -> ScopeNames:
    """`names` written to a row and read back, through the database's own column types."""
    columns = names.stored_form()
    assert columns is not None
    row = StoredNameList.objects.create(
        workspace_id=WORKSPACE,
        scope_key=f"names:{new_id()}",
        revision=names.revision if revision is None else revision,
        **columns,
    )
    read = ScopeNames.from_stored(StoredNameList.objects.get(pk=row.pk))
    assert read is not None
    return read


@pytest.mark.usefixtures("ctx")
def test_a_stored_list_reads_back_entry_for_entry():
    built = ScopeNames.build(9, entries())
    read = stored_copy(built)
    assert read.revision == 9 and read.length == built.length == SIZE
    assert every_entry(read) == every_entry(built)
    assert read.record_count == built.record_count == SIZE - SIZE // 5
    assert_matches_agree(read, built)


def test_the_record_ids_are_stored_packed_not_as_text():
    rows = entries()
    built = ScopeNames.build(1, rows)
    columns = built.stored_form()
    assert columns is not None
    assert bytes(columns["record_ids"]) == b"".join(uuid.UUID(rid).bytes for rid, _, _ in rows)


@pytest.mark.parametrize("replaced", [2, 21])
@pytest.mark.usefixtures("ctx")
def test_a_list_read_from_its_row_is_patched_as_the_list_it_was_stored_from(replaced):
    rows = entries()
    built = ScopeNames.build(1, rows)
    read = stored_copy(built)
    owners = list(dict.fromkeys(rid for rid, _, _ in rows))
    gone = set(owners[3 : 3 + replaced])
    renamed = [(rid, f"Kirat Singh {n}", False) for n, rid in enumerate(sorted(gone)) if n % 2]
    added = [(new_id(), "Priya Nair", False), (owners[0], "Priya N", True)]
    patched_read = read.patched(2, replaced=gone | {owners[0]}, added=renamed + added)
    # The built list, patched the same way, and a list built afresh with the same live entries.
    patched_built = built.patched(2, replaced=gone | {owners[0]}, added=renamed + added)
    assert patched_read is not None and patched_built is not None
    kept = [e for e in rows if e[0] not in gone and e[0] != owners[0]]
    fresh = ScopeNames.build(2, kept + renamed + added)
    assert sorted(every_entry(patched_read)) == sorted(every_entry(fresh))
    assert every_entry(patched_read) == every_entry(patched_built)
    assert patched_read.record_count == fresh.record_count
    assert_matches_agree(patched_read, fresh)
    assert [m.display for m in match_names(patched_read, "kirat singh 1")][:1] == ["Kirat Singh 1"]
    # A second patch of the same records finds their appended entries, not the stored ones.
    again = patched_read.patched(3, replaced={owners[0]}, added=[(owners[0], "Priya", False)])
    assert again is not None
    assert [again.entry(i)[1] for i in again.live_indices() if again.entry(i)[0] == owners[0]] == [
        "Priya"
    ]
    assert read.exact_indices("priya nair") == [], "the older view reads what it read before"


DISPLAYS = ["Rahul Sharma", "McDonald", "ACME Ltd", "iPhone", "Zoë Müller", "o'brien", "O'Brien"]
DISPLAYS += ["  Kirat   Singh ", "", "ǅemal"]


@pytest.mark.usefixtures("ctx")
def test_a_display_its_name_gives_back_is_stored_empty_and_read_back_as_it_was():
    """Only displays that are not their name title-cased are stored (most person and company
    names are), so the row carries the names once; every display still reads back exactly."""
    rows = [(new_id(), display, n % 7 == 6) for n in range(STEP * 2) for display in DISPLAYS]
    built = ScopeNames.build(1, rows)
    columns = built.stored_form()
    assert columns is not None
    stored = columns["displays"].split(SEP)
    assert stored[: len(DISPLAYS)] == [
        "",
        "McDonald",
        "ACME Ltd",
        "iPhone",
        "",
        "o'brien",
        "",
        "  Kirat   Singh ",
        "",
        "ǅemal",
    ]
    read = stored_copy(built)
    assert every_entry(read) == every_entry(built)
    assert [read.entry(i)[1] for i in range(len(rows))] == [display for _, display, _ in rows]
    assert [m.display for m in match_names(read, "mcdonald") if m.exact][:1] == ["McDonald"]
    assert every_entry(stored_copy(read)) == every_entry(built), "stored again as read"


def test_a_list_that_cannot_be_packed_is_not_stored():
    """IDs that are not canonical UUIDs, or a display holding the separator, have no stored
    form: the list is then read from the records on each start, never stored wrong."""
    assert ScopeNames.build(1, [("r1", "Kirat", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id().upper(), "Kirat", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id(), "Kirat\x1fSingh", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id(), "Kirat", False)]).stored_form() is not None


def test_a_packed_id_is_found_only_on_its_own_boundary():
    """Two IDs side by side hold every 16-byte run across their boundary: none is a match."""
    first, second = new_id(), new_id()
    base = ScopeNames.build(1, [(first, "A", False), (second, "B", False)]).base
    assert list(base.positions(first)) == [0] and list(base.positions(second)) == [1]
    assert isinstance(base.ids, bytes)
    assert list(base.positions(str(uuid.UUID(bytes=base.ids[8:24])))) == []


def corrupt_layout(row: StoredNameList) -> None:
    row.layout = NAME_LIST_LAYOUT - 1


def corrupt_ids(row: StoredNameList) -> None:
    row.record_ids = bytes(row.record_ids)[:-16]


def corrupt_torn_id(row: StoredNameList) -> None:
    row.record_ids = bytes(row.record_ids)[:-3]


def corrupt_names(row: StoredNameList) -> None:
    row.names = row.names.replace("\x1f", " ", 1)


def corrupt_displays(row: StoredNameList) -> None:
    row.displays = row.displays.replace("\x1f", " ", 1)


def corrupt_aliases(row: StoredNameList) -> None:
    row.aliases = row.aliases[:-1] + "2"


@pytest.mark.parametrize(
    "corrupt",
    [
        corrupt_layout,
        corrupt_ids,
        corrupt_torn_id,
        corrupt_names,
        corrupt_displays,
        corrupt_aliases,
    ],
)
def test_a_row_that_does_not_read_back_whole_is_rebuilt_and_stored_again(ctx, monkeypatch, corrupt):
    monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    for n in range(STEP + 3):  # past the first display mark
        make_record(ctx, people, f"Person {n}")
    kirat = make_record(ctx, people, "Kirat")
    scope_names(WORKSPACE, people.pk)
    row = StoredNameList.objects.get(scope_key=f"names:{people.pk}")
    corrupt(row)
    row.save()
    assert ScopeNames.from_stored(StoredNameList.objects.get(pk=row.pk)) is None
    names_cache.clear_cache()  # the restart
    loads = count_loads(monkeypatch)
    restarted = scope_names(WORKSPACE, people.pk)
    assert len(loads) == 1, "read from the records"
    assert [m.record_id for m in match_names(restarted, "kirat") if m.exact] == [kirat.pk]
    assert restarted.length == STEP + 4
    stored_again = ScopeNames.from_stored(StoredNameList.objects.get(pk=row.pk))
    assert stored_again is not None and stored_again.length == STEP + 4


def test_a_fresh_process_reads_ids_and_displays_from_the_row_as_stored(ctx, monkeypatch):
    """After a restart only the names are split; an answer decodes just the entries it names."""
    monkeypatch.setattr(names_cache, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    records = [make_record(ctx, people, f"Person {n}") for n in range(2 * STEP)]
    scope_names(WORKSPACE, people.pk)
    services.record_rename(
        ctx=ctx, record_id=records[5].pk, title="Kirat Singh", expected_version=1
    )
    names_cache.clear_cache()
    restarted = scope_names(WORKSPACE, people.pk)
    assert restarted.tail == ((records[5].pk, "Kirat Singh", False),), "only the rename appended"
    assert restarted.dead == {5} and len(restarted.base.ids) == 16 * 2 * STEP
    found = match_names(restarted, "kirat singh")
    assert [(m.record_id, m.display) for m in found if m.exact] == [(records[5].pk, "Kirat Singh")]
    assert [m.record_id for m in match_names(restarted, "person 70") if m.exact] == [records[70].pk]
    assert Record.objects.filter(collection=people).count() == 2 * STEP


@pytest.mark.django_db(transaction=True)
def test_the_migration_to_the_packed_layout_forgets_rows_of_the_earlier_one():
    """Rows of the earlier layout are a cache: the migration deletes them (the next load
    rebuilds and stores the list), and on PostgreSQL keeps the long columns uncompressed."""
    from django.db.migrations.executor import MigrationExecutor

    before = [("workflow", "0008_stored_name_list")]
    after = [("workflow", "0009_name_list_packed")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        workspace = old.get_model("records", "Workspace").objects.get_or_create(pk=WORKSPACE)[0]
        old.get_model("workflow", "StoredNameList").objects.create(
            workspace=workspace,
            scope_key="names:x",
            revision=1,
            record_ids=new_id(),
            names="kirat",
            displays="Kirat",
            aliases="0",
        )
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new = executor.loader.project_state(after).apps
        assert not new.get_model("workflow", "StoredNameList").objects.exists()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = "
                    "'workflow_storednamelist'::regclass AND attname IN "
                    "('record_ids', 'names', 'displays')"
                )
                assert dict(cursor.fetchall()) == {
                    "record_ids": "e",
                    "names": "e",
                    "displays": "e",
                }
    finally:
        MigrationExecutor(connection).migrate(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
