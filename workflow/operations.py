"""The write operations an agent can prepare: exact argument keys, evidence rules, effect.

Each operation is checked twice, at prepare and again at commit inside the write transaction,
and applied through records.services so it is validated, versioned and audited like any write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from records import services
from records import validation as v
from records.approval import NOTHING, Touched
from records.errors import ARCHIVED, NOT_FOUND, AnchorError, invalid, not_found
from records.models import Collection, Record, Relationship
from records.names import normalize_name
from records.selectors.serialize import collection_dict, record_dict, relationship_dict
from records.services import CollectionFields, WriteContext
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.scope import Scope

# What a checked operation touches: records and links by ID, so the approval policy finds
# their collections from the data current when it decides (prepare, commit or approval).
Check = Touched

# An operation's arguments: exactly its keys (parse_operation checks them), values still JSON
# as the agent sent them until each check validates the ones it reads.
Args = dict[str, Any]
CheckFn = Callable[[Scope, Args, list[ReviewTicket], str], Check]
ApplyFn = Callable[[WriteContext, Args], dict[str, Any]]


@dataclass(frozen=True)
class Operation:
    name: str
    keys: tuple[str, ...]
    check: CheckFn
    apply: ApplyFn
    summary: str


def _record(scope: Scope, record_id: Any, field: str) -> Record:
    record_id = v.record_id(record_id, field)
    record = Record.objects.filter(workspace_id=scope.workspace_id, pk=record_id).first()
    if record is None:
        raise not_found("record", record_id)
    return record


def _require_active(record: Record, doing: str) -> None:
    """Refuse at once what the write itself would refuse: asking the user cannot help."""
    if record.archived_at is not None:
        raise AnchorError(
            ARCHIVED,
            f"Record {record.pk} ({record.title!r}) is archived; {doing} is not allowed on "
            "archived records.",
            record_id=record.pk,
            archived_at=record.archived_at.isoformat(),
        )


def _collection(scope: Scope, collection_id: Any) -> Collection:
    collection_id = v.entity_id(collection_id, "collection_id")
    collection = Collection.objects.filter(
        workspace_id=scope.workspace_id, pk=collection_id
    ).first()
    if collection is None:
        raise not_found("collection", collection_id)
    return collection


def _fields(args: dict[str, Any]) -> CollectionFields:
    return CollectionFields.validated(
        name=args["name"],
        purpose=args["purpose"],
        record_meaning=args["record_meaning"],
        typical_fields=args["typical_fields"],
        relationship_guidance=args["relationship_guidance"],
    )


def _existing_collection(scope: Scope, name: str) -> Collection | None:
    normalized = normalize_name(name)
    return Collection.objects.filter(
        workspace_id=scope.workspace_id, normalized_name=normalized
    ).first()


# --- collections -----------------------------------------------------------------------------


def check_create_collection(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    fields = _fields(args)
    ticket = evidence.discovery_for_name(tickets, name=fields.name, purpose=fields.purpose)
    if _existing_collection(scope, fields.name) is not None:
        return NOTHING  # reused unchanged; nothing to clarify
    suggestions = ticket.answer.get("suggestions", [])
    if suggestions:
        evidence.require_clarification(
            clarification,
            "The discovery found possibly overlapping collections "
            f"({', '.join(repr(s['name']) for s in suggestions[:5])}). Reusing one is often "
            "better; a new collection needs the clarified distinction.",
            suggestions=[s["collection_id"] for s in suggestions],
        )
    return NOTHING  # a new collection is never gated yet


def apply_create_collection(ctx: WriteContext, args: Args) -> dict[str, Any]:
    fields = _fields(args)
    existing = _existing_collection(Scope(ctx.workspace_id, ctx.actor_id), fields.name)
    if existing is not None:
        services.audit_unchanged(
            ctx,
            kind="collection.reused",
            entity_type="collection",
            entity_id=existing.pk,
            collection_id=existing.pk,
            state=collection_dict(existing, view="state"),
        )
        return {
            "collection": collection_dict(existing, view="write"),
            "created": False,
            "note": "A collection with this name exists; it is returned unchanged.",
        }
    collection = services.collection_create(ctx=ctx, fields=fields)
    return {"collection": collection_dict(collection, view="write"), "created": True}


def check_update_collection(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    collection = _collection(scope, args["collection_id"])
    fields = _fields(args)
    # A discovery of exactly the new name and purpose, whose catalog lists this collection.
    ticket = evidence.discovery_for_name(tickets, name=fields.name, purpose=fields.purpose)
    evidence.collection_in_discovery([ticket], collection.pk)
    renamed = normalize_name(fields.name) != collection.normalized_name
    if renamed or fields.purpose != collection.purpose:
        others = [
            s for s in ticket.answer.get("suggestions", []) if s["collection_id"] != collection.pk
        ]
        if others:
            evidence.require_clarification(
                clarification,
                "The new name or purpose resembles other collections "
                f"({', '.join(repr(s['name']) for s in others[:5])}).",
                suggestions=[s["collection_id"] for s in others],
            )
    return Touched.of(collections=[collection.pk])


def apply_update_collection(ctx: WriteContext, args: Args) -> dict[str, Any]:
    collection = services.collection_update(
        ctx=ctx, collection_id=args["collection_id"], fields=_fields(args)
    )
    return {"collection": collection_dict(collection, view="write")}


def check_collection_alias(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    collection = _collection(scope, args["collection_id"])
    alias = v.name(args["alias"], "alias")
    # A discovery of the alias itself: what else the name already means in the catalog.
    ticket = evidence.discovery_for_name(tickets, name=alias, purpose=None, field="alias")
    evidence.collection_in_discovery([ticket], collection.pk)
    evidence.require_clarification(
        clarification, "Collection aliases change how names resolve and need the user's word."
    )
    return Touched.of(collections=[collection.pk])


def apply_add_collection_alias(ctx: WriteContext, args: Args) -> dict[str, Any]:
    services.collection_alias_add(ctx=ctx, collection_id=args["collection_id"], alias=args["alias"])
    collection = Collection.objects.get(pk=args["collection_id"])
    return {"collection": collection_dict(collection, view="write")}


def apply_remove_collection_alias(ctx: WriteContext, args: Args) -> dict[str, Any]:
    services.collection_alias_remove(
        ctx=ctx, collection_id=args["collection_id"], alias=args["alias"]
    )
    collection = Collection.objects.get(pk=args["collection_id"])
    return {"collection": collection_dict(collection, view="write")}


# --- records ---------------------------------------------------------------------------------


def check_create_record(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    collection = _collection(scope, args["collection_id"])
    title = v.title(args["title"])
    v.json_object("data", args["data"])
    evidence.title_reviewed(
        tickets, title=title, collection_id=collection.pk, clarification=clarification
    )
    return Touched.of(collections=[collection.pk])


def apply_create_record(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_create(
        ctx=ctx, collection_id=args["collection_id"], title=args["title"], data=args["data"]
    )
    return {"record": record_dict(record, view="write")}


def _check_existing_record(
    scope: Scope,
    args: Args,
    tickets: list[ReviewTicket],
    clarification: str,
    *,
    needs_word: str = "",
    doing: str = "",
) -> Check:
    record = _record(scope, args["record_id"], "record_id")
    v.expected_version(args["expected_version"])
    if doing:
        _require_active(record, doing)
    evidence.record_reviewed(tickets, record.pk, clarification, "record_id")
    if needs_word:
        evidence.require_clarification(clarification, needs_word)
    return Touched.of(records=[record.pk])


def check_update_record(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    v.json_object("changes", args["changes"])
    return _check_existing_record(scope, args, tickets, clarification, doing="changing data")


def apply_update_record(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_update(
        ctx=ctx,
        record_id=args["record_id"],
        changes=args["changes"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def check_archive_record(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    return _check_existing_record(scope, args, tickets, clarification, doing="archiving again")


def apply_archive_record(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_archive(
        ctx=ctx, record_id=args["record_id"], expected_version=args["expected_version"]
    )
    return {"record": record_dict(record, view="write")}


def check_rename_record(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    check = _check_existing_record(scope, args, tickets, clarification, doing="renaming")
    record = _record(scope, args["record_id"], "record_id")
    evidence.title_reviewed(
        tickets,
        title=v.title(args["title"]),
        collection_id=record.collection_id,
        clarification=clarification,
        ignore_record_id=record.pk,
    )
    return check


def apply_rename_record(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_rename(
        ctx=ctx,
        record_id=args["record_id"],
        title=args["title"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


ALIAS_WORD = "Aliases change how names resolve; record the user's explicit statement."


def check_record_alias(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    v.title(args["alias"], "alias")
    return _check_existing_record(scope, args, tickets, clarification, needs_word=ALIAS_WORD)


def check_add_record_alias(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    v.title(args["alias"], "alias")
    return _check_existing_record(
        scope, args, tickets, clarification, needs_word=ALIAS_WORD, doing="adding an alias"
    )


def apply_add_record_alias(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_alias_add(
        ctx=ctx,
        record_id=args["record_id"],
        alias=args["alias"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def apply_remove_record_alias(ctx: WriteContext, args: Args) -> dict[str, Any]:
    record = services.record_alias_remove(
        ctx=ctx,
        record_id=args["record_id"],
        alias=args["alias"],
        expected_version=args["expected_version"],
    )
    return {"record": record_dict(record, view="write")}


def check_set_self(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    return _check_existing_record(
        scope,
        args,
        tickets,
        clarification,
        doing="mapping yourself to it",
        needs_word="A self mapping decides what 'me' means; record the user's explicit "
        "statement of who they are.",
    )


def apply_set_self(ctx: WriteContext, args: Args) -> dict[str, Any]:
    mapping = services.self_mapping_set(
        ctx=ctx, record_id=args["record_id"], expected_version=args["expected_version"]
    )
    return {"self_mapping": {"actor_id": mapping.actor_id, "record_id": mapping.record_id}}


# --- relationships ---------------------------------------------------------------------------


def check_link_records(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    source = _record(scope, args["source_id"], "source_id")
    target = _record(scope, args["target_id"], "target_id")
    rel_type = v.relationship_type(args["relationship_type"])
    if not Relationship.objects.filter(
        source=source, relationship_type=rel_type, target=target
    ).exists():  # linking an existing link again is a no-op, allowed either way
        _require_active(source, "linking")
        _require_active(target, "linking")
    evidence.record_reviewed(tickets, source.pk, clarification, "source_id")
    evidence.record_reviewed(tickets, target.pk, clarification, "target_id")
    return Touched.of(records=[source.pk, target.pk])  # both ends' collections


def apply_link_records(ctx: WriteContext, args: Args) -> dict[str, Any]:
    rel, created = services.relationship_create(
        ctx=ctx,
        source_id=args["source_id"],
        relationship_type=args["relationship_type"],
        target_id=args["target_id"],
    )
    if not created:  # nothing changed, but the decision and its evidence stay in the history
        services.audit_unchanged(
            ctx,
            kind="relationship.already_linked",
            entity_type="relationship",
            entity_id=rel.pk,
            record_id=rel.source_id,
            collection_id=rel.source.collection_id,
            state={**relationship_dict(rel), "target_title": rel.target.title},
        )
    return {"relationship": relationship_dict(rel), "created": created}


def _relationship(scope: Scope, relationship_id: Any) -> Relationship:
    relationship_id = v.entity_id(relationship_id, "relationship_id")
    rel = (
        Relationship.objects.filter(workspace_id=scope.workspace_id, pk=relationship_id)
        .select_related("source", "target")
        .first()
    )
    if rel is None:
        raise AnchorError(
            NOT_FOUND,
            f"relationship_id: no relationship {relationship_id!r} in this workspace (it may "
            "have been removed already; read the record's context).",
            field="relationship_id",
        )
    return rel


def check_unlink_records(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Check:
    rel = _relationship(scope, args["relationship_id"])
    evidence.record_reviewed(tickets, rel.source_id, clarification, "relationship_id (source)")
    evidence.record_reviewed(tickets, rel.target_id, clarification, "relationship_id (target)")
    return Touched.of(relationships=[rel.pk])  # both ends' collections


def apply_unlink_records(ctx: WriteContext, args: Args) -> dict[str, Any]:
    removed = services.relationship_delete(ctx=ctx, relationship_id=args["relationship_id"])
    return {"removed_relationship": removed}


COLLECTION_KEYS = ("name", "purpose", "record_meaning", "typical_fields", "relationship_guidance")

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in [
        Operation(
            "create_collection",
            COLLECTION_KEYS,
            check_create_collection,
            apply_create_collection,
            "Create a collection (or reuse one of that name).",
        ),
        Operation(
            "update_collection",
            ("collection_id", *COLLECTION_KEYS),
            check_update_collection,
            apply_update_collection,
            "Replace a collection's name and description.",
        ),
        Operation(
            "add_collection_alias",
            ("collection_id", "alias"),
            check_collection_alias,
            apply_add_collection_alias,
            "Add another name for a collection.",
        ),
        Operation(
            "remove_collection_alias",
            ("collection_id", "alias"),
            check_collection_alias,
            apply_remove_collection_alias,
            "Remove a collection alias.",
        ),
        Operation(
            "create_record",
            ("collection_id", "title", "data"),
            check_create_record,
            apply_create_record,
            "Create a record.",
        ),
        Operation(
            "update_record",
            ("record_id", "changes", "expected_version"),
            check_update_record,
            apply_update_record,
            "Merge changes into a record's data (top-level keys).",
        ),
        Operation(
            "archive_record",
            ("record_id", "expected_version"),
            check_archive_record,
            apply_archive_record,
            "Archive a record (hidden from search, kept).",
        ),
        Operation(
            "rename_record",
            ("record_id", "title", "expected_version"),
            check_rename_record,
            apply_rename_record,
            "Change a record's title.",
        ),
        Operation(
            "add_record_alias",
            ("record_id", "alias", "expected_version"),
            check_add_record_alias,
            apply_add_record_alias,
            "Add another name for a record.",
        ),
        Operation(
            "remove_record_alias",
            ("record_id", "alias", "expected_version"),
            check_record_alias,
            apply_remove_record_alias,
            "Remove a record alias.",
        ),
        Operation(
            "set_self",
            ("record_id", "expected_version"),
            check_set_self,
            apply_set_self,
            "Record which record 'me' means for this actor.",
        ),
        Operation(
            "link_records",
            ("source_id", "relationship_type", "target_id"),
            check_link_records,
            apply_link_records,
            "Link two records.",
        ),
        Operation(
            "unlink_records",
            ("relationship_id",),
            check_unlink_records,
            apply_unlink_records,
            "Remove a link.",
        ),
    ]
}


def parse_operation(operation: Any, arguments: Any) -> tuple[Operation, dict[str, Any]]:
    if not isinstance(operation, str) or operation not in OPERATIONS:
        raise invalid(
            "operation", f"{operation!r} is not an operation; use one of {sorted(OPERATIONS)}."
        )
    op = OPERATIONS[operation]
    if not isinstance(arguments, dict):
        raise invalid("arguments", f"must be a JSON object with keys {list(op.keys)}.")
    given, wanted = set(arguments), set(op.keys)
    if given != wanted:
        parts = []
        if wanted - given:
            parts.append(f"missing {sorted(wanted - given)}")
        if given - wanted:
            parts.append(f"unexpected {sorted(given - wanted)}")
        raise invalid(
            "arguments",
            f"{operation} takes exactly {list(op.keys)}: {'; '.join(parts)}.",
        )
    return op, arguments
