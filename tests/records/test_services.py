"""The services' shared change sequences (records, collections), and collection aliases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from records import services
from records.errors import AnchorError
from records.models import (
    AuditEvent,
    Collection,
    CollectionAlias,
    Record,
    RecordAlias,
    RecordVersion,
)
from records.selectors.serialize import collection_dict
from records.services import WriteContext
from tests.conftest import make_collection, make_record

# Each record mutation, called on a record at `version` that has the alias "KS".
Mutation = Callable[[WriteContext, Record, int], Record]
MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "update": (
        "record.updated",
        lambda ctx, r, version: services.record_update(
            ctx=ctx, record_id=r.pk, changes={"team": "core"}, expected_version=version
        ),
    ),
    "rename": (
        "record.renamed",
        lambda ctx, r, version: services.record_rename(
            ctx=ctx, record_id=r.pk, title="Kirat Singh", expected_version=version
        ),
    ),
    "archive": (
        "record.archived",
        lambda ctx, r, version: services.record_archive(
            ctx=ctx, record_id=r.pk, expected_version=version
        ),
    ),
    "alias_add": (
        "record.alias_added",
        lambda ctx, r, version: services.record_alias_add(
            ctx=ctx, record_id=r.pk, alias="Kiki", expected_version=version
        ),
    ),
    "alias_remove": (
        "record.alias_removed",
        lambda ctx, r, version: services.record_alias_remove(
            ctx=ctx, record_id=r.pk, alias="KS", expected_version=version
        ),
    ),
}


@pytest.fixture
def kirat(ctx: WriteContext) -> Record:
    """A record at version 2 with one alias."""
    people = make_collection(ctx, "people")
    record = make_record(ctx, people, "Kirat", role="engineer")
    return services.record_alias_add(ctx=ctx, record_id=record.pk, alias="KS", expected_version=1)


def _written(record: Record) -> tuple[int, int, list[str]]:
    return (
        RecordVersion.objects.filter(record=record).count(),
        AuditEvent.objects.filter(record_id=record.pk).count(),
        sorted(RecordAlias.objects.filter(record=record).values_list("alias", flat=True)),
    )


@pytest.mark.parametrize("name", MUTATIONS)
def test_each_record_change_writes_one_version_and_one_audit_event(ctx, kirat, name):
    kind, mutate = MUTATIONS[name]
    versions, events, _ = _written(kirat)

    changed = mutate(ctx, kirat, 2)

    stored = Record.objects.get(pk=kirat.pk)
    assert changed.version == stored.version == 3
    assert RecordVersion.objects.filter(record=kirat).count() == versions + 1
    assert AuditEvent.objects.filter(record_id=kirat.pk).count() == events + 1
    version = RecordVersion.objects.get(record=kirat, version=3)
    aliases = sorted(stored.aliases.values_list("alias", flat=True))
    assert (version.title, version.data, version.aliases, version.archived_at) == (
        stored.title,
        stored.data,
        aliases,
        stored.archived_at,
    )
    assert version.recorded_at == stored.updated_at
    event = AuditEvent.objects.filter(record_id=kirat.pk).order_by("-id").first()
    assert event is not None
    assert (event.kind, event.entity_type, event.entity_id) == (kind, "record", kirat.pk)
    assert (event.actor_id, event.collection_id) == (ctx.actor_id, kirat.collection_id)
    assert event.created_at == version.recorded_at
    before, after = event.before, event.after
    assert before is not None and after is not None
    assert before["version"] == 2 and before["aliases"] == ["KS"]
    assert before["title"] == "Kirat" and before["data"] == {"role": "engineer"}
    assert after["version"] == 3 and after["aliases"] == aliases
    assert after["title"] == stored.title and after["data"] == stored.data
    assert before != after


@pytest.mark.parametrize("name", MUTATIONS)
def test_a_stale_expected_version_is_refused_and_writes_nothing(ctx, kirat, name):
    _, mutate = MUTATIONS[name]
    before = _written(kirat)

    with pytest.raises(AnchorError) as refused:
        mutate(ctx, kirat, 1)

    assert refused.value.code == "VERSION_CONFLICT"
    assert refused.value.details["current_version"] == 2
    assert refused.value.details["expected_version"] == 1
    assert _written(kirat) == before
    stored = Record.objects.get(pk=kirat.pk)
    assert (stored.version, stored.title, stored.data, stored.archived_at) == (
        2,
        "Kirat",
        {"role": "engineer"},
        None,
    )


def test_a_stale_version_wins_over_the_change_own_refusal(ctx, kirat):
    """The version is checked first: an agent acting on an old read rereads before anything."""
    with pytest.raises(AnchorError) as refused:
        services.record_rename(ctx=ctx, record_id=kirat.pk, title="Kirat", expected_version=1)
    assert refused.value.code == "VERSION_CONFLICT"
    with pytest.raises(AnchorError) as refused:
        services.record_alias_add(ctx=ctx, record_id=kirat.pk, alias="KS", expected_version=1)
    assert refused.value.code == "VERSION_CONFLICT"


@pytest.mark.parametrize("name", ["update", "rename", "archive", "alias_add"])
def test_changes_to_an_archived_record_are_refused_and_write_nothing(ctx, kirat, name):
    _, mutate = MUTATIONS[name]
    services.record_archive(ctx=ctx, record_id=kirat.pk, expected_version=2)
    before = _written(kirat)

    with pytest.raises(AnchorError) as refused:
        mutate(ctx, kirat, 3)

    assert refused.value.code == "ARCHIVED"
    assert _written(kirat) == before


def test_an_alias_can_still_be_removed_from_an_archived_record(ctx, kirat):
    services.record_archive(ctx=ctx, record_id=kirat.pk, expected_version=2)
    record = services.record_alias_remove(
        ctx=ctx, record_id=kirat.pk, alias="ks", expected_version=3
    )
    assert record.version == 4
    assert not RecordAlias.objects.filter(record=kirat).exists()
    assert RecordVersion.objects.get(record=kirat, version=4).aliases == []


def test_a_refused_change_own_check_writes_nothing(ctx, kirat):
    before = _written(kirat)
    refusals: list[Callable[[], Any]] = [
        lambda: services.record_rename(
            ctx=ctx, record_id=kirat.pk, title="Kirat", expected_version=2
        ),
        lambda: services.record_alias_add(
            ctx=ctx, record_id=kirat.pk, alias="ks", expected_version=2
        ),
        lambda: services.record_alias_remove(
            ctx=ctx, record_id=kirat.pk, alias="nobody", expected_version=2
        ),
        lambda: services.record_update(
            ctx=ctx, record_id=kirat.pk, changes={"notes": "x" * 70_000}, expected_version=2
        ),
    ]
    for refusal in refusals:
        with pytest.raises(AnchorError):
            refusal()
    assert _written(kirat) == before
    assert Record.objects.get(pk=kirat.pk).version == 2


def test_record_create_writes_version_one_and_its_audit_event(ctx):
    people = make_collection(ctx, "people")
    record = make_record(ctx, people, "Kirat", role="engineer")
    version = RecordVersion.objects.get(record=record)
    event = AuditEvent.objects.get(record_id=record.pk)
    assert (version.version, version.title, version.aliases) == (1, "Kirat", [])
    assert (event.kind, event.before) == ("record.created", None)
    assert event.after == {
        "collection_id": people.pk,
        "title": "Kirat",
        "data": {"role": "engineer"},
        "version": 1,
        "archived_at": None,
        "aliases": [],
    }


# --- collection aliases -----------------------------------------------------------------------


def test_collection_alias_remove_deletes_the_alias_and_audits_it(ctx):
    people = make_collection(ctx, "people")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="staff")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="crew")

    services.collection_alias_remove(ctx=ctx, collection_id=people.pk, alias="Staff")

    remaining = CollectionAlias.objects.filter(collection=people).values_list("alias", flat=True)
    assert list(remaining) == ["crew"]
    event = AuditEvent.objects.get(kind="collection.alias_removed")
    assert event.before is not None and event.after is not None
    assert event.before["aliases"] == ["crew", "staff"]
    assert event.after["aliases"] == ["crew"]
    # The name is free again: another collection may now take it.
    make_collection(ctx, "staff")


def test_removing_a_collection_alias_it_does_not_have_is_not_found(ctx):
    people = make_collection(ctx, "people")
    with pytest.raises(AnchorError) as missing:
        services.collection_alias_remove(ctx=ctx, collection_id=people.pk, alias="staff")
    assert missing.value.code == "NOT_FOUND"
    assert not AuditEvent.objects.filter(kind="collection.alias_removed").exists()


# --- the collection-change sequence -----------------------------------------------------------

CollectionMutation = Callable[[WriteContext, str], Any]
COLLECTION_CHANGES: dict[str, tuple[str, CollectionMutation, bool]] = {
    # name: (audit kind, the change, whether it changes the collection's own columns)
    "update": (
        "collection.updated",
        lambda ctx, pk: services.collection_update(
            ctx=ctx,
            collection_id=pk,
            fields=services.CollectionFields.validated(
                name="people",
                purpose="Everyone we work with.",
                record_meaning="One person.",
                typical_fields=["role"],
                relationship_guidance="",
            ),
        ),
        True,
    ),
    "policy": (
        "collection.policy_changed",
        lambda ctx, pk: services.collection_set_requires_approval(
            ctx=ctx, collection_id=pk, requires_approval=True
        ),
        True,
    ),
    "alias_add": (
        "collection.alias_added",
        lambda ctx, pk: services.collection_alias_add(ctx=ctx, collection_id=pk, alias="crew"),
        False,
    ),
    "alias_remove": (
        "collection.alias_removed",
        lambda ctx, pk: services.collection_alias_remove(ctx=ctx, collection_id=pk, alias="staff"),
        False,
    ),
}


@pytest.mark.parametrize("name", COLLECTION_CHANGES)
def test_every_collection_change_is_one_audited_step_with_its_context(ctx, name):
    kind, change, moves_columns = COLLECTION_CHANGES[name]
    people = make_collection(ctx, "people")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="staff")
    people.refresh_from_db()
    agent = WriteContext(
        workspace_id=ctx.workspace_id,
        actor_id="agent:tidy",
        decision_reason="Tidy the catalogue.",
        clarification="The user asked for it.",
        review_evidence=[{"review_id": "rv-1"}],
        action_id="act-1",
        item_index=0,
    )

    change(agent, people.pk)

    event = AuditEvent.objects.get(kind=kind, actor_id="agent:tidy")
    after = Collection.objects.get(pk=people.pk)
    assert (event.entity_type, event.entity_id, event.collection_id) == (
        "collection",
        people.pk,
        people.pk,
    )
    assert event.before is not None and event.before["aliases"] == ["staff"]
    assert event.after == collection_dict(after, view="state"), "after: as the change left it"
    if moves_columns:
        assert after.updated_at == event.created_at, "the change and its event share one time"
    else:
        assert after.updated_at == people.updated_at, "an alias change leaves the row as it was"
    assert (
        event.decision_reason,
        event.agent_reported_clarification,
        event.review_evidence,
        event.action_id,
        event.item_index,
    ) == ("Tidy the catalogue.", "The user asked for it.", [{"review_id": "rv-1"}], "act-1", 0)


@pytest.mark.parametrize("name", COLLECTION_CHANGES)
def test_a_collection_change_on_another_workspace_is_not_found_and_writes_nothing(ctx, name):
    _, change, _ = COLLECTION_CHANGES[name]
    people = make_collection(ctx, "people")
    services.collection_alias_add(ctx=ctx, collection_id=people.pk, alias="staff")
    events = AuditEvent.objects.count()
    elsewhere = WriteContext(workspace_id="elsewhere", actor_id="local-agent")
    services.workspace_ensure("elsewhere")

    with pytest.raises(AnchorError) as missing:
        change(elsewhere, people.pk)

    assert missing.value.code == "NOT_FOUND"
    assert missing.value.message.startswith(
        f"collection_id: no collection with ID {people.pk!r} in this workspace."
    )
    assert missing.value.details["field"] == "collection_id"
    assert AuditEvent.objects.count() == events
