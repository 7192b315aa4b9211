"""Checks several operations share: the record or collection an argument names, an existing
record's version, state and review, a collection's fields and its alias review.

A refusal the write itself would make (an archived record) is made here with the store's own
check, so prepare and commit say the same thing in the same words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from records import validation as v
from records.approval import Touched
from records.ids import is_valid_id
from records.models import Collection, Record
from records.names import normalize_name
from records.selectors import check_active, in_workspace
from records.services import CollectionFields
from workflow import evidence
from workflow.models import ReviewTicket
from workflow.operations import Args, CheckFn, Names
from workflow.scope import Scope

COLLECTION_ARGUMENTS = {
    "name": Names.VALUE,
    "purpose": Names.VALUE,
    "record_meaning": Names.VALUE,
    "typical_fields": Names.VALUE,
    "relationship_guidance": Names.VALUE,
}
COLLECTION_NOTES = {"typical_fields": "1-20 names"}
ALIAS_WORD = "Aliases change how names resolve; record the user's explicit statement."


# In a batch, a link end may name the record an earlier create_record item makes: "actions[0]".
REFERENCE = re.compile(r"actions\[(\d{1,2})\]")


def created_earlier(value: Any) -> int | None:
    """The batch index a link end such as "actions[0]" refers to, or None for anything else."""
    match = REFERENCE.fullmatch(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


# The records a batch's items name, read in one statement before their checks (read_together).
_read_together: ContextVar[dict[str, Record] | None] = ContextVar("read_together", default=None)


@contextmanager
def read_together(workspace_id: str, record_ids: Iterable[Any]) -> Iterator[None]:
    """In the block, record_named takes these records of the workspace from one read by primary
    key (the workspace checked on the rows found, as values_by_id does), not one read each."""
    ids = [pk for pk in record_ids if is_valid_id(pk)]
    rows = Record.objects.filter(pk__in=ids) if ids else Record.objects.none()
    token = _read_together.set({r.pk: r for r in rows if r.workspace_id == workspace_id})
    try:
        yield
    finally:
        _read_together.reset(token)


def record_named(scope: Scope, record_id: Any, field: str) -> Record:
    record_id = v.record_id(record_id, field)
    known = (_read_together.get() or {}).get(record_id)
    if known is not None:
        return known
    return in_workspace(
        Record.objects, workspace_id=scope.workspace_id, pk=record_id, kind="record", field=field
    )


def collection_named(scope: Scope, collection_id: Any) -> Collection:
    collection_id = v.entity_id(collection_id, "collection_id")
    return in_workspace(
        Collection.objects, workspace_id=scope.workspace_id, pk=collection_id, kind="collection"
    )


def collection_called(workspace_id: str, name: str) -> Collection | None:
    """The collection whose name is `name` once normalized, if there is one."""
    return Collection.objects.filter(
        workspace_id=workspace_id, normalized_name=normalize_name(name)
    ).first()


def collection_fields(args: Args) -> CollectionFields:
    return CollectionFields.validated(**{key: args[key] for key in COLLECTION_ARGUMENTS})


def existing_record_checked(
    scope: Scope,
    args: Args,
    tickets: list[ReviewTicket],
    clarification: str,
    *,
    needs_word: str = "",
    doing: str = "",
) -> Touched:
    """A change to the record `record_id` at `expected_version`: the record exists, is active
    unless `doing` is empty (a change allowed on archived records), was reviewed, and, when
    `needs_word`, the user's statement is reported."""
    record = record_named(scope, args["record_id"], "record_id")
    v.expected_version(args["expected_version"])
    if doing:  # refused at once, as the write itself would: asking the user cannot help
        check_active(record, doing)
    evidence.record_reviewed(tickets, record.pk, clarification, "record_id")
    if needs_word:
        evidence.require_clarification(clarification, needs_word)
    return Touched.of(records=[record.pk])


def existing_record(
    doing: str = "", needs_word: str = "", *, first: Callable[[Args], object] | None = None
) -> CheckFn:
    """existing_record_checked as an operation's check, after `first` checks other arguments."""

    def check(scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str) -> Touched:
        if first is not None:
            first(args)
        return existing_record_checked(
            scope, args, tickets, clarification, needs_word=needs_word, doing=doing
        )

    return check


def collection_alias_checked(
    scope: Scope, args: Args, tickets: list[ReviewTicket], clarification: str
) -> Touched:
    """Adding or removing a collection alias: a discovery of the alias itself (what else the
    name already means in the catalog) that lists the collection, and the user's word."""
    collection = collection_named(scope, args["collection_id"])
    alias = v.name(args["alias"], "alias")
    ticket = evidence.discovery_for_name(tickets, name=alias, purpose=None, field="alias")
    evidence.collection_in_discovery([ticket], collection.pk)
    evidence.require_clarification(
        clarification, "Collection aliases change how names resolve and need the user's word."
    )
    return Touched.of(collections=[collection.pk])
