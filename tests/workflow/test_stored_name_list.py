"""The stored name list's compact layout: what is stored reads back entry for entry, a list
read from it is patched as a built one is, and a row that does not read back whole is rebuilt.

The record IDs are packed, the displays kept joined with a mark every STEP entries and the
alias flags kept as stored (workflow.name_columns); these tests take lists long enough to cross
several marks, and check every entry, not a sample.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from workflow.name_columns import SEP, STEP, JoinedTexts, PackedIds
from workflow.name_index import (
    FEW_RECORDS,
    SCANS_BEFORE_OWNERS,
    ScopeNames,
    match_names,
    scope_names,
)

from records import services
from records.ids import new_id
from records.models import Record
from tests.conftest import WORKSPACE, make_collection, make_record
from tests.workflow.test_name_index_updates import count_loads
from workflow.models import StoredNameList
from workflow.models.name_lists import NAME_LIST_LAYOUT
from workflow.names import cache as names_cache

SIZE = 5 * STEP + 7  # several display marks, and a last block cut short


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


def every_entry(names: ScopeNames) -> list[tuple[str, str, str, bool]]:
    return [
        (names.record_ids[i], names.names[i], names.displays[i], names.is_alias[i])
        for i in names.live_indices()
    ]


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
    assert list(read.record_ids) == list(built.record_ids)
    assert list(read.displays) == list(built.displays)
    assert list(read.is_alias) == list(built.is_alias)
    assert read.record_count == built.record_count == SIZE - SIZE // 5
    assert read.displays[-1] == built.displays[SIZE - 1]
    with pytest.raises(IndexError):
        read.displays[SIZE]
    with pytest.raises(IndexError):
        read.record_ids[SIZE]
    assert_matches_agree(read, built)


def test_the_record_ids_are_stored_packed_not_as_text():
    built = ScopeNames.build(1, entries())
    columns = built.stored_form()
    assert columns is not None
    assert bytes(columns["record_ids"]) == b"".join(
        uuid.UUID(rid).bytes for rid in built.record_ids
    )
    assert len(columns["display_marks"]) == 4 * ((SIZE + STEP - 1) // STEP)


@pytest.mark.parametrize("replaced", [2, FEW_RECORDS + 5])  # by search, and by the owner map
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
    assert [
        again.displays[i] for i in again.live_indices() if again.record_ids[i] == owners[0]
    ] == ["Priya"]
    assert read.exact_indices("priya nair") == [], "the older view reads what it read before"


@pytest.mark.usefixtures("ctx")
def test_a_list_patched_one_record_at_a_time_indexes_its_owners_once_and_stays_right():
    rows = entries()
    owners = list(dict.fromkeys(rid for rid, _, _ in rows))
    view = stored_copy(ScopeNames.build(1, rows))
    renames = SCANS_BEFORE_OWNERS + 3
    for n in range(renames):
        # Before the map each patch scans every ID; from then on it reads the map.
        assert (view.entries.owners is None) == (n <= SCANS_BEFORE_OWNERS), n
        patched = view.patched(
            n + 2, replaced={owners[n]}, added=[(owners[n], f"Moved {n}", False)]
        )
        assert patched is not None
        view = patched
    assert view.entries.owners is not None and view.entries.scans == SCANS_BEFORE_OWNERS
    renamed = {owners[n]: f"Moved {n}" for n in range(renames)}
    fresh = ScopeNames.build(
        renames + 1,
        [e for e in rows if e[0] not in renamed] + [(r, t, False) for r, t in renamed.items()],
    )
    assert sorted(every_entry(view)) == sorted(every_entry(fresh))
    assert_matches_agree(view, fresh)


@pytest.mark.usefixtures("ctx")
def test_a_list_with_appended_entries_stores_and_reads_back_whole():
    read = stored_copy(ScopeNames.build(1, entries()))
    grown = read.patched(2, replaced=set(), added=[(new_id(), "Priya Nair", False)])
    assert grown is not None and grown.dead_count == 0
    again = stored_copy(grown)
    assert every_entry(again) == every_entry(grown)
    assert again.displays[SIZE] == "Priya Nair" and again.record_count == read.record_count + 1


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
    assert list(read.displays) == [display for _, display, _ in rows]
    assert [read.displays[i] for i in range(len(rows))] == [display for _, display, _ in rows]
    assert [m.display for m in match_names(read, "mcdonald") if m.exact][:1] == ["McDonald"]
    assert every_entry(stored_copy(read)) == every_entry(built), "stored again as read"


def test_a_list_that_cannot_be_packed_is_not_stored():
    """IDs that are not canonical UUIDs, or a display holding the separator, have no stored
    form: the list is then read from the records on each start, never stored wrong."""
    assert ScopeNames.build(1, [("r1", "Kirat", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id().upper(), "Kirat", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id(), "Kirat\x1fSingh", False)]).stored_form() is None
    assert ScopeNames.build(1, [(new_id(), "Kirat", False)]).stored_form() is not None


def test_a_non_uuid_id_is_found_in_a_packed_list_only_where_it_was_appended():
    packed = PackedIds(b"".join(uuid.UUID(new_id()).bytes for _ in range(3)))
    packed.extend(["r1"])
    assert list(packed.positions("r1")) == [3]
    assert packed.key("r1") not in set(list(packed.keys())[:3])


def test_a_packed_id_is_found_only_on_its_own_boundary():
    """Two IDs side by side hold every 16-byte run across their boundary: none is a match."""
    first, second = new_id(), new_id()
    packed = PackedIds(PackedIds(tail=[first, second]).pack() or b"")
    assert list(packed.positions(first)) == [0] and list(packed.positions(second)) == [1]
    straddling = packed.packed[8:24]
    assert list(packed.positions(str(uuid.UUID(bytes=straddling)))) == []


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


def corrupt_marks(row: StoredNameList) -> None:
    marks = bytearray(row.display_marks)
    marks[4] += 1  # the second mark, one character into its entry
    row.display_marks = bytes(marks)


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
        corrupt_marks,
        corrupt_aliases,
    ],
)
def test_a_row_that_does_not_read_back_whole_is_rebuilt_and_stored_again(ctx, monkeypatch, corrupt):
    monkeypatch.setattr(name_index, "STORE_FROM_RECORDS", 1)
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
    monkeypatch.setattr(name_index, "STORE_FROM_RECORDS", 1)
    people = make_collection(ctx, "people")
    records = [make_record(ctx, people, f"Person {n}") for n in range(2 * STEP)]
    scope_names(WORKSPACE, people.pk)
    services.record_rename(
        ctx=ctx, record_id=records[5].pk, title="Kirat Singh", expected_version=1
    )
    names_cache.clear_cache()
    restarted = scope_names(WORKSPACE, people.pk)
    assert restarted.record_ids.tail == [records[5].pk], "only the renamed record appended"
    assert restarted.displays.tail == ["Kirat Singh"]
    assert len(restarted.record_ids.packed) == 16 * 2 * STEP
    found = match_names(restarted, "kirat singh")
    assert [(m.record_id, m.display) for m in found if m.exact] == [(records[5].pk, "Kirat Singh")]
    assert [m.record_id for m in match_names(restarted, "person 70") if m.exact] == [records[70].pk]
    assert Record.objects.filter(collection=people).count() == 2 * STEP


def test_joined_texts_refuse_marks_that_do_not_begin_entries():
    texts = [f"name {n}" for n in range(2 * STEP + 1)]
    joined_form = JoinedTexts(tail=texts).joined_form()
    assert joined_form is not None
    joined, marks = joined_form
    assert list(JoinedTexts.read(joined, len(texts), marks) or []) == texts
    assert JoinedTexts.read(joined, len(texts) + 1, marks) is None
    assert JoinedTexts.read(joined, len(texts), marks[:-4]) is None
    assert JoinedTexts.read(joined[:-1], len(texts), marks) is not None  # shorter last entry
    assert JoinedTexts.read(joined.replace("\x1f", "", 1), len(texts), marks) is None


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
