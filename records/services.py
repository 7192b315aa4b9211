"""Every mutation of the store. Each validates, versions, audits, and runs in one transaction.

Callers (workflow, admin, commands) pass a WriteContext saying who acts, in which workspace and
why; the audit event is written in the same transaction as the change it describes. Revision
counters and the search index move by trigger, so nothing here touches them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from records import validation as v
from records.errors import (
    ARCHIVED,
    INVALID_INPUT,
    NEEDS_CLARIFICATION,
    VERSION_CONFLICT,
    AnchorError,
    invalid,
    not_found,
)
from records.models import (
    AuditEvent,
    Collection,
    CollectionAlias,
    Record,
    RecordAlias,
    RecordVersion,
    Relationship,
    SelfMapping,
    Workspace,
)
from records.names import normalize_name


@dataclass(frozen=True)
class WriteContext:
    """Who writes, where, and why. Clarification is what the agent reports the user said."""

    workspace_id: str
    actor_id: str
    decision_reason: str = ""
    clarification: str = ""
    review_evidence: list[Any] = field(default_factory=list)
    action_id: str = ""
    item_index: int | None = None


# --- helpers ---------------------------------------------------------------------------------


def workspace_ensure(workspace_id: str) -> Workspace:
    workspace, _ = Workspace.objects.get_or_create(id=workspace_id)
    return workspace


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def record_state(record: Record, aliases: list[str] | None = None) -> dict[str, Any]:
    if aliases is None:
        aliases = sorted(record.aliases.values_list("alias", flat=True))
    return {
        "title": record.title,
        "data": record.data,
        "version": record.version,
        "archived_at": _iso(record.archived_at),
        "aliases": aliases,
        "collection_id": record.collection_id,
    }


def collection_state(collection: Collection) -> dict[str, Any]:
    return {
        "name": collection.name,
        "purpose": collection.purpose,
        "record_meaning": collection.record_meaning,
        "typical_fields": collection.typical_fields,
        "relationship_guidance": collection.relationship_guidance,
        "aliases": sorted(collection.aliases.values_list("alias", flat=True)),
        "requires_approval": collection.requires_approval,
    }


def _audit(
    ctx: WriteContext,
    *,
    kind: str,
    entity_type: str,
    entity_id: str,
    record_id: str = "",
    collection_id: str = "",
    before: Any = None,
    after: Any = None,
    at: datetime,
) -> AuditEvent:
    return AuditEvent.objects.create(
        workspace_id=ctx.workspace_id,
        actor_id=ctx.actor_id,
        kind=kind,
        entity_type=entity_type,
        entity_id=entity_id,
        record_id=record_id,
        collection_id=collection_id,
        before=before,
        after=after,
        decision_reason=ctx.decision_reason,
        agent_reported_clarification=ctx.clarification,
        review_evidence=ctx.review_evidence,
        action_id=ctx.action_id,
        item_index=ctx.item_index,
        created_at=at,
    )


def _collection_for_update(ctx: WriteContext, collection_id: Any, field: str) -> Collection:
    collection_id = v.entity_id(collection_id, field)
    collection = (
        Collection.objects.select_for_update()
        .filter(workspace_id=ctx.workspace_id, pk=collection_id)
        .first()
    )
    if collection is None:
        raise not_found("collection", collection_id)
    return collection


def _record_for_update(ctx: WriteContext, record_id: Any, field: str = "record_id") -> Record:
    record_id = v.record_id(record_id, field)
    record = (
        Record.objects.select_for_update()
        .filter(workspace_id=ctx.workspace_id, pk=record_id)
        .first()
    )
    if record is None:
        raise not_found("record", record_id)
    return record


def _check_version(record: Record, expected_version: Any) -> None:
    expected = v.expected_version(expected_version)
    if record.version != expected:
        raise AnchorError(
            VERSION_CONFLICT,
            f"Record {record.pk} is at version {record.version}, not {expected}. Read it again "
            "with get_record_context and reconsider the change against its current state.",
            record_id=record.pk,
            current_version=record.version,
            expected_version=expected,
        )


def _check_active(record: Record, doing: str) -> None:
    if record.archived_at is not None:
        raise AnchorError(
            ARCHIVED,
            f"Record {record.pk} ({record.title!r}) is archived; {doing} is not allowed on "
            "archived records.",
            record_id=record.pk,
            archived_at=_iso(record.archived_at),
        )


def _save_version(record: Record, ctx: WriteContext, at: datetime, aliases: list[str]) -> None:
    RecordVersion.objects.create(
        record=record,
        version=record.version,
        title=record.title,
        data=record.data,
        aliases=aliases,
        archived_at=record.archived_at,
        actor_id=ctx.actor_id,
        recorded_at=at,
    )


def _record_aliases(record: Record) -> list[str]:
    return sorted(record.aliases.values_list("alias", flat=True))


# --- collections -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectionFields:
    name: str
    purpose: str
    record_meaning: str
    typical_fields: list[str]
    relationship_guidance: str

    @classmethod
    def validated(
        cls,
        *,
        name: Any,
        purpose: Any,
        record_meaning: Any,
        typical_fields: Any,
        relationship_guidance: Any,
    ) -> CollectionFields:
        return cls(
            name=v.name(name),
            purpose=v.description(purpose, "purpose"),
            record_meaning=v.description(record_meaning, "record_meaning"),
            typical_fields=v.typical_fields(typical_fields),
            relationship_guidance=v.description(
                relationship_guidance, "relationship_guidance", allow_blank=True
            ),
        )


def _check_collection_name_free(
    ctx: WriteContext, normalized: str, *, field: str, exclude_id: str | None = None
) -> None:
    clash = Collection.objects.filter(workspace_id=ctx.workspace_id, normalized_name=normalized)
    alias_clash = CollectionAlias.objects.filter(
        workspace_id=ctx.workspace_id, normalized_alias=normalized
    )
    if exclude_id:
        clash = clash.exclude(pk=exclude_id)
        alias_clash = alias_clash.exclude(collection_id=exclude_id)
    existing = clash.first()
    if existing is not None:
        raise AnchorError(
            INVALID_INPUT,
            f"{field}: a collection named {existing.name!r} already exists; reuse it "
            f"(collection_id {existing.pk}) or choose a distinct name.",
            field=field,
            collection_id=existing.pk,
        )
    alias = alias_clash.select_related("collection").first()
    if alias is not None:
        raise AnchorError(
            INVALID_INPUT,
            f"{field}: {alias.alias!r} is an alias of collection {alias.collection.name!r}; "
            f"reuse it (collection_id {alias.collection_id}) or choose a distinct name.",
            field=field,
            collection_id=alias.collection_id,
        )


def collection_create(*, ctx: WriteContext, fields: CollectionFields) -> Collection:
    with transaction.atomic():
        workspace_ensure(ctx.workspace_id)
        normalized = normalize_name(fields.name)
        _check_collection_name_free(ctx, normalized, field="name")
        now = timezone.now()
        collection = Collection.objects.create(
            workspace_id=ctx.workspace_id,
            name=fields.name,
            normalized_name=normalized,
            purpose=fields.purpose,
            record_meaning=fields.record_meaning,
            typical_fields=fields.typical_fields,
            relationship_guidance=fields.relationship_guidance,
            created_by=ctx.actor_id,
            created_at=now,
            updated_at=now,
        )
        _audit(
            ctx,
            kind="collection.created",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            after=collection_state(collection),
            at=now,
        )
        return collection


def collection_update(
    *, ctx: WriteContext, collection_id: Any, fields: CollectionFields
) -> Collection:
    with transaction.atomic():
        collection = _collection_for_update(ctx, collection_id, "collection_id")
        before = collection_state(collection)
        normalized = normalize_name(fields.name)
        if normalized != collection.normalized_name:
            _check_collection_name_free(ctx, normalized, field="name", exclude_id=collection.pk)
        now = timezone.now()
        collection.name = fields.name
        collection.normalized_name = normalized
        collection.purpose = fields.purpose
        collection.record_meaning = fields.record_meaning
        collection.typical_fields = fields.typical_fields
        collection.relationship_guidance = fields.relationship_guidance
        collection.updated_at = now
        collection.save()
        _audit(
            ctx,
            kind="collection.updated",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            before=before,
            after=collection_state(collection),
            at=now,
        )
        return collection


def collection_set_requires_approval(
    *, ctx: WriteContext, collection_id: Any, requires_approval: bool
) -> Collection:
    with transaction.atomic():
        collection = _collection_for_update(ctx, collection_id, "collection_id")
        before = collection_state(collection)
        now = timezone.now()
        collection.requires_approval = bool(requires_approval)
        collection.updated_at = now
        collection.save(update_fields=["requires_approval", "updated_at"])
        _audit(
            ctx,
            kind="collection.policy_changed",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            before=before,
            after=collection_state(collection),
            at=now,
        )
        return collection


def collection_alias_add(*, ctx: WriteContext, collection_id: Any, alias: Any) -> CollectionAlias:
    with transaction.atomic():
        collection = _collection_for_update(ctx, collection_id, "collection_id")
        alias_text = v.name(alias, "alias")
        normalized = normalize_name(alias_text)
        if collection.aliases.count() >= v.MAX_ALIASES:
            raise invalid("alias", f"collection already has {v.MAX_ALIASES} aliases (the limit).")
        if (
            normalized == collection.normalized_name
            or collection.aliases.filter(normalized_alias=normalized).exists()
        ):
            raise invalid("alias", f"{alias_text!r} already names this collection.")
        _check_collection_name_free(ctx, normalized, field="alias", exclude_id=collection.pk)
        before = collection_state(collection)
        now = timezone.now()
        created = CollectionAlias.objects.create(
            workspace_id=ctx.workspace_id,
            collection=collection,
            alias=alias_text,
            normalized_alias=normalized,
            created_by=ctx.actor_id,
            created_at=now,
        )
        _audit(
            ctx,
            kind="collection.alias_added",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            before=before,
            after=collection_state(collection),
            at=now,
        )
        return created


def collection_alias_remove(*, ctx: WriteContext, collection_id: Any, alias: Any) -> None:
    with transaction.atomic():
        collection = _collection_for_update(ctx, collection_id, "collection_id")
        alias_text = v.name(alias, "alias")
        existing = collection.aliases.filter(normalized_alias=normalize_name(alias_text)).first()
        if existing is None:
            raise AnchorError(
                "NOT_FOUND",
                f"alias: collection {collection.name!r} has no alias {alias_text!r}.",
                field="alias",
            )
        before = collection_state(collection)
        existing.delete()
        now = timezone.now()
        _audit(
            ctx,
            kind="collection.alias_removed",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            before=before,
            after=collection_state(collection),
            at=now,
        )


# --- records ---------------------------------------------------------------------------------


def record_create(*, ctx: WriteContext, collection_id: Any, title: Any, data: Any) -> Record:
    title_text = v.title(title)
    data_obj = v.json_object("data", data)
    with transaction.atomic():
        collection_id = v.entity_id(collection_id, "collection_id")
        collection = Collection.objects.filter(
            workspace_id=ctx.workspace_id, pk=collection_id
        ).first()
        if collection is None:
            raise not_found("collection", collection_id)
        now = timezone.now()
        record = Record.objects.create(
            workspace_id=ctx.workspace_id,
            collection=collection,
            title=title_text,
            data=data_obj,
            version=1,
            created_by=ctx.actor_id,
            created_at=now,
            updated_at=now,
        )
        _save_version(record, ctx, now, [])
        _audit(
            ctx,
            kind="record.created",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=collection.pk,
            after=record_state(record, []),
            at=now,
        )
        return record


def _check_merged_size(record: Record, merged: dict[str, Any]) -> None:
    """The merged record must fit too; the error says it is the merge, not the changes, that
    is too big (both parts are valid JSON already)."""
    size = len(v.canonical_json(merged).encode("utf-8"))
    if size > v.MAX_DATA_BYTES:
        current = len(v.canonical_json(record.data).encode("utf-8"))
        raise invalid(
            "changes",
            f"merged into the record's current data ({current} bytes) they make a record of "
            f"{size} bytes as canonical JSON; the limit is {v.MAX_DATA_BYTES}. Store less, "
            "replace large fields instead of adding to them, or split the data across linked "
            "records.",
            merged_size=size,
            current_size=current,
            limit=v.MAX_DATA_BYTES,
        )


def _bump(record: Record, ctx: WriteContext, now: datetime) -> None:
    record.version += 1
    record.updated_at = now


def record_update(
    *, ctx: WriteContext, record_id: Any, changes: Any, expected_version: Any
) -> Record:
    """Shallow merge: omitted keys stay, explicit null is stored, nested objects are replaced."""
    changes_obj = v.json_object("changes", changes)
    if not changes_obj:
        raise invalid("changes", "is empty; name at least one field to change.")
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        _check_active(record, "changing data")
        aliases = _record_aliases(record)
        before = record_state(record, aliases)
        merged = {**record.data, **changes_obj}
        _check_merged_size(record, merged)
        now = timezone.now()
        record.data = merged
        _bump(record, ctx, now)
        record.save(update_fields=["data", "version", "updated_at"])
        _save_version(record, ctx, now, aliases)
        _audit(
            ctx,
            kind="record.updated",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            before=before,
            after=record_state(record, aliases),
            at=now,
        )
        return record


def record_rename(
    *, ctx: WriteContext, record_id: Any, title: Any, expected_version: Any
) -> Record:
    title_text = v.title(title)
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        _check_active(record, "renaming")
        if title_text == record.title:
            raise invalid("title", "is the record's current title; nothing would change.")
        aliases = _record_aliases(record)
        before = record_state(record, aliases)
        now = timezone.now()
        record.title = title_text
        _bump(record, ctx, now)
        record.save(update_fields=["title", "version", "updated_at"])
        _save_version(record, ctx, now, aliases)
        _audit(
            ctx,
            kind="record.renamed",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            before=before,
            after=record_state(record, aliases),
            at=now,
        )
        return record


def record_archive(*, ctx: WriteContext, record_id: Any, expected_version: Any) -> Record:
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        _check_active(record, "archiving again")
        aliases = _record_aliases(record)
        before = record_state(record, aliases)
        now = timezone.now()
        record.archived_at = now
        _bump(record, ctx, now)
        record.save(update_fields=["archived_at", "version", "updated_at"])
        _save_version(record, ctx, now, aliases)
        _audit(
            ctx,
            kind="record.archived",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            before=before,
            after=record_state(record, aliases),
            at=now,
        )
        return record


def record_alias_add(
    *, ctx: WriteContext, record_id: Any, alias: Any, expected_version: Any
) -> Record:
    alias_text = v.title(alias, "alias")
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        _check_active(record, "adding an alias")
        normalized = normalize_name(alias_text)
        aliases = _record_aliases(record)
        if len(aliases) >= v.MAX_ALIASES:
            raise invalid("alias", f"record already has {v.MAX_ALIASES} aliases (the limit).")
        if (
            normalized == normalize_name(record.title)
            or record.aliases.filter(normalized_alias=normalized).exists()
        ):
            raise invalid("alias", f"{alias_text!r} already names this record.")
        before = record_state(record, aliases)
        now = timezone.now()
        RecordAlias.objects.create(
            workspace_id=ctx.workspace_id,
            record=record,
            alias=alias_text,
            normalized_alias=normalized,
            created_by=ctx.actor_id,
            created_at=now,
        )
        aliases = sorted([*aliases, alias_text])
        _bump(record, ctx, now)
        record.save(update_fields=["version", "updated_at"])
        _save_version(record, ctx, now, aliases)
        _audit(
            ctx,
            kind="record.alias_added",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            before=before,
            after=record_state(record, aliases),
            at=now,
        )
        return record


def record_alias_remove(
    *, ctx: WriteContext, record_id: Any, alias: Any, expected_version: Any
) -> Record:
    alias_text = v.title(alias, "alias")
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        existing = record.aliases.filter(normalized_alias=normalize_name(alias_text)).first()
        if existing is None:
            raise AnchorError(
                "NOT_FOUND",
                f"alias: record {record.title!r} has no alias {alias_text!r}.",
                field="alias",
            )
        aliases = _record_aliases(record)
        before = record_state(record, aliases)
        existing.delete()
        aliases = [a for a in aliases if a != existing.alias]
        now = timezone.now()
        _bump(record, ctx, now)
        record.save(update_fields=["version", "updated_at"])
        _save_version(record, ctx, now, aliases)
        _audit(
            ctx,
            kind="record.alias_removed",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            before=before,
            after=record_state(record, aliases),
            at=now,
        )
        return record


def self_mapping_set(*, ctx: WriteContext, record_id: Any, expected_version: Any) -> SelfMapping:
    """Map "me" for this actor. An existing mapping to another record is never replaced."""
    with transaction.atomic():
        record = _record_for_update(ctx, record_id)
        _check_version(record, expected_version)
        _check_active(record, "mapping yourself to it")
        existing = SelfMapping.objects.filter(
            workspace_id=ctx.workspace_id, actor_id=ctx.actor_id
        ).first()
        if existing is not None:
            if existing.record_id == record.pk:
                return existing
            raise AnchorError(
                NEEDS_CLARIFICATION,
                f"Actor {ctx.actor_id!r} is already mapped to record {existing.record_id}; a "
                "mapping is never silently replaced. Ask a person to remove it in the admin "
                "(Self mappings), then set the new one.",
                current_record_id=existing.record_id,
            )
        now = timezone.now()
        mapping = SelfMapping.objects.create(
            workspace_id=ctx.workspace_id, actor_id=ctx.actor_id, record=record, created_at=now
        )
        _audit(
            ctx,
            kind="record.self_mapped",
            entity_type="record",
            entity_id=record.pk,
            record_id=record.pk,
            collection_id=record.collection_id,
            after={"actor_id": ctx.actor_id, "record_id": record.pk},
            at=now,
        )
        return mapping


def self_mapping_remove(*, ctx: WriteContext, actor_id: str) -> None:
    """A person removes an actor's "me" mapping (agents cannot: they may only set one)."""
    with transaction.atomic():
        mapping = (
            SelfMapping.objects.select_for_update()
            .filter(workspace_id=ctx.workspace_id, actor_id=actor_id)
            .first()
        )
        if mapping is None:
            raise AnchorError(
                "NOT_FOUND", f"actor_id: {actor_id!r} has no self mapping.", field="actor_id"
            )
        record_id, collection_id = mapping.record_id, mapping.record.collection_id
        mapping.delete()
        _audit(
            ctx,
            kind="record.self_unmapped",
            entity_type="record",
            entity_id=record_id,
            record_id=record_id,
            collection_id=collection_id,
            before={"actor_id": actor_id, "record_id": record_id},
            at=timezone.now(),
        )


# --- relationships ---------------------------------------------------------------------------


def relationship_state(rel: Relationship) -> dict[str, Any]:
    return {
        "relationship_id": rel.pk,
        "source_id": rel.source_id,
        "relationship_type": rel.relationship_type,
        "target_id": rel.target_id,
    }


def relationship_create(
    *, ctx: WriteContext, source_id: Any, relationship_type: Any, target_id: Any
) -> tuple[Relationship, bool]:
    """Link two records. Linking an existing link again is a no-op that returns it."""
    rel_type = v.relationship_type(relationship_type)
    with transaction.atomic():
        source = _record_for_update(ctx, source_id, "source_id")
        target = _record_for_update(ctx, target_id, "target_id")
        if source.pk == target.pk:
            raise invalid("target_id", "a record cannot be linked to itself.")
        existing = Relationship.objects.filter(
            source=source, relationship_type=rel_type, target=target
        ).first()
        if existing is not None:
            return existing, False
        _check_active(source, "linking")
        _check_active(target, "linking")
        now = timezone.now()
        try:
            with transaction.atomic():
                rel = Relationship.objects.create(
                    workspace_id=ctx.workspace_id,
                    source=source,
                    relationship_type=rel_type,
                    target=target,
                    created_by=ctx.actor_id,
                    created_at=now,
                )
        except IntegrityError:  # a concurrent writer linked the same pair first
            return Relationship.objects.get(
                source=source, relationship_type=rel_type, target=target
            ), False
        _audit(
            ctx,
            kind="relationship.created",
            entity_type="relationship",
            entity_id=rel.pk,
            record_id=source.pk,
            collection_id=source.collection_id,
            after={**relationship_state(rel), "target_title": target.title},
            at=now,
        )
        return rel, True


def relationship_delete(*, ctx: WriteContext, relationship_id: Any) -> dict[str, Any]:
    """Remove a link (also between archived records, so wrong links can always be corrected)."""
    relationship_id = v.entity_id(relationship_id, "relationship_id")
    with transaction.atomic():
        rel = (
            Relationship.objects.select_for_update()
            .select_related("source", "target")
            .filter(workspace_id=ctx.workspace_id, pk=relationship_id)
            .first()
        )
        if rel is None:
            raise not_found("relationship", relationship_id)
        state = {**relationship_state(rel), "target_title": rel.target.title}
        rel.delete()
        now = timezone.now()
        _audit(
            ctx,
            kind="relationship.deleted",
            entity_type="relationship",
            entity_id=relationship_id,
            record_id=state["source_id"],
            collection_id=rel.source.collection_id,
            before=state,
            at=now,
        )
        return state


# --- writes that changed nothing -------------------------------------------------------------


def audit_unchanged(
    ctx: WriteContext,
    *,
    kind: str,
    entity_type: str,
    entity_id: str,
    state: dict[str, Any],
    record_id: str = "",
    collection_id: str = "",
) -> AuditEvent:
    """A committed write that found its effect already in place (a collection reused by name,
    a link that already existed): kept in the history with its reason and evidence."""
    return _audit(
        ctx,
        kind=kind,
        entity_type=entity_type,
        entity_id=entity_id,
        record_id=record_id,
        collection_id=collection_id,
        before=state,
        after=state,
        at=timezone.now(),
    )
