"""One serialiser per entity: each view is a subset of the next, and a past version is shown
through the same record serialiser."""

from __future__ import annotations

from records import services
from records.models import Record, RecordVersion
from records.selectors.serialize import collection_dict, iso, record_dict, relationship_dict
from tests.conftest import link, make_collection, make_record

RECORD_STATE = ["collection_id", "title", "data", "version", "archived_at", "aliases"]
RECORD_WRITE = [
    "record_id",
    "collection_id",
    "title",
    "data",
    "version",
    "created_at",
    "updated_at",
    "archived_at",
    "aliases",
]
RECORD_READ = [
    "record_id",
    "collection_id",
    "collection_name",
    "title",
    "data",
    "version",
    "status",
    "created_at",
    "updated_at",
    "archived_at",
    "created_by",
    "aliases",
]
COLLECTION_DESCRIPTION = [
    "name",
    "purpose",
    "record_meaning",
    "typical_fields",
    "relationship_guidance",
    "aliases",
]


def test_record_views_are_nested_subsets_in_one_key_order(ctx):
    people = make_collection(ctx, "people")
    record = make_record(ctx, people, "Kirat", role="engineer")
    services.record_alias_add(ctx=ctx, record_id=record.pk, alias="KS", expected_version=1)
    record = Record.objects.select_related("collection").get(pk=record.pk)

    read = record_dict(record)
    assert list(record_dict(record, view="state")) == RECORD_STATE
    assert list(record_dict(record, view="write")) == RECORD_WRITE
    assert list(read) == RECORD_READ
    assert read == {
        "record_id": record.pk,
        "collection_id": people.pk,
        "collection_name": "people",
        "title": "Kirat",
        "data": {"role": "engineer"},
        "version": 2,
        "status": "active",
        "created_at": iso(record.created_at),
        "updated_at": iso(record.updated_at),
        "archived_at": None,
        "created_by": ctx.actor_id,
        "aliases": ["KS"],
    }
    assert record_dict(record, view="state", aliases=["given"])["aliases"] == ["given"]


def test_a_past_version_shows_its_own_state_and_the_record_identity(ctx):
    people = make_collection(ctx, "people")
    record = make_record(ctx, people, "Kirat", role="engineer")
    services.record_alias_add(ctx=ctx, record_id=record.pk, alias="KS", expected_version=1)
    services.record_rename(ctx=ctx, record_id=record.pk, title="Kirat S", expected_version=2)
    services.record_archive(ctx=ctx, record_id=record.pk, expected_version=3)
    record = Record.objects.select_related("collection").get(pk=record.pk)
    second = RecordVersion.objects.get(record=record, version=2)

    shown = record_dict(record, version=second)

    assert list(shown) == RECORD_READ
    assert (shown["title"], shown["version"], shown["aliases"]) == ("Kirat", 2, ["KS"])
    assert (shown["status"], shown["archived_at"]) == ("active", None)
    assert shown["updated_at"] == iso(second.recorded_at)
    assert shown["created_at"] == iso(record.created_at)
    assert shown["record_id"] == record.pk and shown["collection_name"] == "people"
    assert record_dict(record)["status"] == "archived"


def test_collection_views_keep_policy_for_state_and_read_and_id_for_write_and_read(ctx):
    people = make_collection(ctx, "people")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="staff")
    services.collection_set_requires_approval(
        ctx=ctx, collection_id=people.pk, requires_approval=True
    )
    people.refresh_from_db()

    assert list(collection_dict(people, view="state")) == [
        *COLLECTION_DESCRIPTION,
        "requires_approval",
    ]
    assert list(collection_dict(people, view="write")) == ["collection_id", *COLLECTION_DESCRIPTION]
    read = collection_dict(people)
    assert list(read) == ["collection_id", *COLLECTION_DESCRIPTION, "requires_approval"]
    assert (read["aliases"], read["requires_approval"]) == (["staff"], True)
    assert collection_dict(people, aliases=[])["aliases"] == []


def test_relationship_dict(ctx):
    people = make_collection(ctx, "people")
    a, b = make_record(ctx, people, "A"), make_record(ctx, people, "B")
    rel = link(ctx, a, "knows", b)
    assert relationship_dict(rel) == {
        "relationship_id": rel.pk,
        "source_id": a.pk,
        "relationship_type": "knows",
        "target_id": b.pk,
    }
