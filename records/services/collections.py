"""Collections: create, describe, set their approval policy, and name them by aliases; every
change goes through one sequence, collection_change, as records' go through record_change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from records import validation as v
from records.errors import INVALID_INPUT, AnchorError, invalid
from records.models import Collection, CollectionAlias, Record
from records.names import normalize_name
from records.selectors.scoped import workspace_collection
from records.selectors.serialize import collection_dict
from records.services.audit_trail import WriteContext, audit, workspace_ensure


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
    # Excluding None excludes nothing: every row has its key.
    clash = Collection.objects.filter(workspace_id=ctx.workspace_id, normalized_name=normalized)
    existing = clash.exclude(pk=exclude_id).first()
    if existing is not None:
        raise AnchorError(
            INVALID_INPUT,
            f"{field}: a collection named {existing.name!r} already exists; reuse it "
            f"(collection_id {existing.pk}) or choose a distinct name.",
            field=field,
            collection_id=existing.pk,
        )
    aliases = CollectionAlias.objects.filter(
        workspace_id=ctx.workspace_id, normalized_alias=normalized
    ).exclude(collection_id=exclude_id)
    alias = aliases.select_related("collection").first()
    if alias is not None:
        raise AnchorError(
            INVALID_INPUT,
            f"{field}: {alias.alias!r} is an alias of collection {alias.collection.name!r}; "
            f"reuse it (collection_id {alias.collection_id}) or choose a distinct name.",
            field=field,
            collection_id=alias.collection_id,
        )


# Validates against the locked collection (raising AnchorError to refuse) and returns the
# columns that change and their new values; it may write alias rows of its own.
CollectionChangeFn = Callable[[Collection, datetime], dict[str, Any]]


def collection_change(
    ctx: WriteContext, collection_id: Any, kind: str, change: CollectionChangeFn
) -> Collection:
    """The one sequence every change to a collection goes through, in one transaction: lock it,
    keep its state, let `change` decide (and write its alias rows), save the columns it names
    with updated_at, and audit one event of `kind`, all stamped with one time. A change that
    names no column (an alias) leaves the collection's row and updated_at as they were."""
    with transaction.atomic():
        collection = workspace_collection(ctx.workspace_id, collection_id, lock=True)
        before = collection_dict(collection, view="state")
        now = timezone.now()
        fields = change(collection, now)
        if fields:
            for name, value in fields.items():
                setattr(collection, name, value)
            collection.updated_at = now
            collection.save(update_fields=[*fields, "updated_at"])
        audit(
            ctx,
            kind=kind,
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            before=before,
            after=collection_dict(collection, view="state"),
            at=now,
        )
        return collection


def collection_create(*, ctx: WriteContext, fields: CollectionFields) -> Collection:
    with transaction.atomic():
        workspace_ensure(ctx.workspace_id)
        normalized = normalize_name(fields.name)
        _check_collection_name_free(ctx, normalized, field="name")
        now = timezone.now()
        collection = Collection.objects.create(
            workspace_id=ctx.workspace_id,
            **asdict(fields),
            normalized_name=normalized,
            created_by=ctx.actor_id,
            created_at=now,
            updated_at=now,
        )
        audit(
            ctx,
            kind="collection.created",
            entity_type="collection",
            entity_id=collection.pk,
            collection_id=collection.pk,
            after=collection_dict(collection, view="state"),
            at=now,
        )
        return collection


def collection_update(
    *, ctx: WriteContext, collection_id: Any, fields: CollectionFields
) -> Collection:
    normalized = normalize_name(fields.name)

    def describe(collection: Collection, now: datetime) -> dict[str, Any]:
        if normalized != collection.normalized_name:
            _check_collection_name_free(ctx, normalized, field="name", exclude_id=collection.pk)
        return {**asdict(fields), "normalized_name": normalized}

    return collection_change(ctx, collection_id, "collection.updated", describe)


def collection_set_requires_approval(
    *, ctx: WriteContext, collection_id: Any, requires_approval: bool
) -> Collection:
    def policy(collection: Collection, now: datetime) -> dict[str, Any]:
        return {"requires_approval": bool(requires_approval)}

    return collection_change(ctx, collection_id, "collection.policy_changed", policy)


def alias_add(
    ctx: WriteContext, owner: Record | Collection, alias_text: str, *, count: int, now: datetime
) -> None:
    """Give a record or collection (with `count` aliases) one more, refusing one past the limit
    or one naming it already; a collection's must name no other collection either."""
    kind = owner._meta.model_name
    normalized = normalize_name(alias_text)
    if count >= v.MAX_ALIASES:
        raise invalid("alias", f"{kind} already has {v.MAX_ALIASES} aliases (the limit).")
    if (
        normalized == normalize_name(str(owner))
        or owner.aliases.filter(normalized_alias=normalized).exists()
    ):
        raise invalid("alias", f"{alias_text!r} already names this {kind}.")
    if isinstance(owner, Collection):
        _check_collection_name_free(ctx, normalized, field="alias", exclude_id=owner.pk)
    owner.aliases.create(
        workspace_id=ctx.workspace_id,
        alias=alias_text,
        normalized_alias=normalized,
        created_by=ctx.actor_id,
        created_at=now,
    )


def alias_remove(owner: Record | Collection, alias_text: str) -> str:
    """Delete the alias of a record or collection that `alias_text` names; returns it as stored."""
    existing = owner.aliases.filter(normalized_alias=normalize_name(alias_text)).first()
    if existing is None:
        raise AnchorError(
            "NOT_FOUND",
            f"alias: {owner._meta.model_name} {str(owner)!r} has no alias {alias_text!r}.",
            field="alias",
        )
    existing.delete()
    return existing.alias


def collection_alias_add(*, ctx: WriteContext, collection_id: Any, alias: Any) -> Collection:
    def add(collection: Collection, now: datetime) -> dict[str, Any]:
        alias_add(
            ctx, collection, v.name(alias, "alias"), count=collection.aliases.count(), now=now
        )
        return {}

    return collection_change(ctx, collection_id, "collection.alias_added", add)


def collection_alias_remove(*, ctx: WriteContext, collection_id: Any, alias: Any) -> None:
    def remove(collection: Collection, now: datetime) -> dict[str, Any]:
        alias_remove(collection, v.name(alias, "alias"))
        return {}

    collection_change(ctx, collection_id, "collection.alias_removed", remove)
