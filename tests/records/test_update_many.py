"""record_update_many: the rows record_update leaves, for many records, and the same refusals."""

from __future__ import annotations

import pytest

from records import services
from records.errors import AnchorError
from records.models import AuditEvent, Record, RecordVersion
from records.services import RecordUpdate
from tests.conftest import make_collection, make_record

IGNORED = {"id", "created_at", "recorded_at", "updated_at"}


def rows(record: Record) -> tuple[dict, dict, dict]:
    """The record, its newest version and its newest audit event, without IDs and times."""
    record.refresh_from_db()
    version = RecordVersion.objects.filter(record=record).order_by("-version").first()
    event = AuditEvent.objects.filter(record_id=record.pk).order_by("-created_at", "-id").first()
    assert version is not None and event is not None
    shown = []
    for row in (record, version, event):
        fields = {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields}
        shown.append({k: v for k, v in fields.items() if k not in IGNORED})
    for item in (shown[2]["before"], shown[2]["after"]):
        item.pop("updated_at", None)
    shown[2].pop("entity_id")
    shown[2].pop("record_id")
    shown[1].pop("record_id")
    return shown[0] | {"id": None}, shown[1], shown[2]


def test_many_updates_leave_the_rows_single_updates_leave(ctx):
    notes = make_collection(ctx, "notes")
    one = [make_record(ctx, notes, f"Note {n}", n=n) for n in range(3)]
    many = [make_record(ctx, notes, f"Note {n}", n=n) for n in range(3)]
    for record in (one[1], many[1]):
        services.record_alias_add(ctx=ctx, record_id=record.pk, alias="Second", expected_version=1)
    for record in one + many:
        record.refresh_from_db()
    for record in one:
        services.record_update(
            ctx=ctx, record_id=record.pk, changes={"done": True}, expected_version=record.version
        )
    written = services.record_update_many(
        [RecordUpdate(ctx, r.pk, {"done": True}, r.version) for r in many]
    )
    assert [record.pk for record, _ in written] == [r.pk for r in many]
    assert [aliases for _, aliases in written] == [[], ["Second"], []]
    for single, bulk in zip(one, many, strict=True):
        assert rows(single) == rows(bulk)


@pytest.mark.parametrize(
    ("position", "change", "code"),
    [
        (1, {"expected_version": 7}, "VERSION_CONFLICT"),
        (2, {"changes": {}}, "INVALID_INPUT"),
        (0, {"record_id": "not an id"}, "INVALID_INPUT"),
    ],
)
def test_a_refusal_names_the_update_and_writes_nothing(ctx, position, change, code):
    notes = make_collection(ctx, "notes")
    records = [make_record(ctx, notes, f"Note {n}") for n in range(3)]
    updates = [RecordUpdate(ctx, r.pk, {"done": True}, 1) for r in records]
    fields = {
        "ctx": ctx,
        "record_id": records[position].pk,
        "changes": {"done": True},
        "expected_version": 1,
    }
    updates[position] = RecordUpdate(**(fields | change))
    with pytest.raises(AnchorError) as refused:
        services.record_update_many(updates)
    assert refused.value.code == code and refused.value.details["update_index"] == position
    assert set(Record.objects.filter(collection=notes).values_list("version", flat=True)) == {1}


def test_archived_and_other_workspaces_records_are_refused(ctx, other_ctx):
    notes = make_collection(ctx, "notes")
    kept, archived = make_record(ctx, notes, "Kept"), make_record(ctx, notes, "Gone")
    services.record_archive(ctx=ctx, record_id=archived.pk, expected_version=1)
    with pytest.raises(AnchorError) as refused:
        services.record_update_many(
            [RecordUpdate(ctx, kept.pk, {"a": 1}, 1), RecordUpdate(ctx, archived.pk, {"a": 1}, 2)]
        )
    assert refused.value.code == "ARCHIVED" and refused.value.details["update_index"] == 1
    theirs = make_record(other_ctx, make_collection(other_ctx, "theirs"), "Theirs")
    with pytest.raises(AnchorError) as refused:
        services.record_update_many([RecordUpdate(ctx, theirs.pk, {"a": 1}, 1)])
    assert refused.value.code == "NOT_FOUND"
