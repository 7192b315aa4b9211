"""The write operations an agent can prepare, one module each, looked up by name.

Every module of this package but the support modules below defines one operation as
OPERATION (its shape is `Operation`): argument keys, checks (run at prepare and again at commit
inside the write transaction), apply (through records.services, so it is validated, versioned
and audited like any write), batchability, and what it would change as plain data for the
admin (change.py). They are registered when the package is first imported. Everything that
needs to know about an operation (prepare and commit, batches, the published tool schemas, the
admin's review and queue) asks here, so adding an operation is adding its module (and its
tests).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from records.approval import Touched
from records.errors import invalid
from records.services import WriteContext
from workflow.models import ReviewTicket
from workflow.operations.change import Change, CurrentRecords
from workflow.scope import Scope

# The package's modules that define no operation.
SUPPORT_MODULES = frozenset({"change", "checks"})


class Names(Enum):
    """What an argument's value names: the admin fetches the titles of records and collections
    named by ID before it shows a write."""

    RECORD = "record"
    COLLECTION = "collection"
    RELATIONSHIP = "relationship"
    VALUE = "value"  # anything else: text, JSON, a version


# An operation's arguments: exactly its keys (parse_operation checks them), values still JSON
# as the agent sent them until each check validates the ones it reads.
Args = dict[str, Any]
# Checks the arguments and the cited reviews, raising AnchorError to refuse; returns what the
# write touches (records and links by ID), so the approval policy finds their collections from
# the data current when it decides (prepare, commit or approval).
CheckFn = Callable[[Scope, Args, list[ReviewTicket], str], Touched]
# apply for many (context, arguments) of distinct records at once: the same rows, fewer
# statements; a refusal carries `update_index`, the position of the pair it refuses.
ApplyManyFn = Callable[[list[tuple[WriteContext, Args]]], list[dict[str, Any]]]


@dataclass(frozen=True, eq=False)
class Operation:
    name: str
    summary: str  # one sentence: what it does
    arguments: Mapping[str, Names]  # exactly its argument keys, in order, and what each names
    check: CheckFn  # run at prepare and again at commit inside the write transaction
    # The write through records.services, inside the caller's transaction; its result.
    apply: Callable[[WriteContext, Args], dict[str, Any]]
    # What the write would change, against the records as they are now.
    change: Callable[[Args, CurrentRecords], Change]
    # Where it stands in the published list of operations (prepare_write's and the batch's
    # enums): the lists are part of the tool schemas, so their order must not move.
    rank: int
    # Allowed in prepare_batch_write: record changes and creations (each creation keeps its
    # own title review; later link items may name what it creates), not collection changes.
    batchable: bool = False
    # A fresh review of what a committed write made, issued after its transaction (or None).
    follow_up: Callable[[Scope, dict[str, Any]], dict[str, Any] | None] | None = None
    # A batch of this operation alone on distinct records is applied with it in one go.
    apply_many: ApplyManyFn | None = None
    # Only for a write a person approves: bring it to the record's current version when what
    # it writes is as the agent saw it. An agent's own commit keeps the exact version check.
    rebase: Callable[[str, Args], Args] | None = None  # (workspace, args) -> args to apply
    # With rebase: the data keys it writes, which are all a person's edit is checked against.
    written_keys: Callable[[Args], list[str]] | None = None
    # In a batch: this item creates a record that later items may name as "actions[N]"...
    creates_a_record: bool = False
    # ...and this one's record arguments may be such references.
    may_name_created_records: bool = False
    # For the agent, in prepare_write's description after the argument keys: a note on some
    # keys' values ("1-20 names"), and what to review beyond the records it names.
    argument_notes: Mapping[str, str] = field(default_factory=dict)
    review_hint: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.arguments)

    def argument_guide(self, keys: str | None = None) -> str:
        """Its argument keys as the agent reads them: "record_id, title, expected_version;
        also resolve the new title". `keys` words the keys otherwise ("collection_id +
        create_collection's keys")."""
        keys = keys or ", ".join(
            f"{key} ({self.argument_notes[key]})" if key in self.argument_notes else key
            for key in self.arguments
        )
        return f"{keys}; {self.review_hint}" if self.review_hint else keys

    def named_ids(self, args: Mapping[str, Any]) -> tuple[set[str], set[str]]:
        """The records and the collections its arguments name by ID."""
        named = [(names, str(args[key])) for key, names in self.arguments.items() if key in args]
        return (
            {value for names, value in named if names is Names.RECORD},
            {value for names, value in named if names is Names.COLLECTION},
        )


_registered: dict[str, Operation] = {}


def register(operation: Operation) -> Operation:
    """Add an operation; a second one of the same name or rank is refused, so the published
    lists are never silently reordered or shadowed, and so is a note on an argument it does
    not take."""
    if operation.name in _registered:
        raise ValueError(f"operation {operation.name!r} is already registered")
    if stray := set(operation.argument_notes) - set(operation.arguments):
        raise ValueError(f"{operation.name!r} notes arguments it does not take: {sorted(stray)}")
    taken = {op.rank: op.name for op in _registered.values()}
    if operation.rank in taken:
        raise ValueError(
            f"rank {operation.rank} of {operation.name!r} is {taken[operation.rank]}'s"
        )
    _registered[operation.name] = operation
    return operation


def unregister(name: str) -> None:
    del _registered[name]


def discover(package: str, path: list[str]) -> list[Operation]:
    """The OPERATION of every module of the package, in module-name order.

    A module that defines none, or one named otherwise than itself, is refused: the file an
    operation lives in is found by its name.
    """
    found = []
    for module in sorted(m.name for m in pkgutil.iter_modules(path)):
        if module in SUPPORT_MODULES or module.startswith("_"):
            continue
        definition = getattr(importlib.import_module(f"{package}.{module}"), "OPERATION", None)
        if not isinstance(definition, Operation):
            raise ImportError(f"{package}.{module} defines no OPERATION")
        if definition.name != module:
            raise ImportError(f"{package}.{module} defines {definition.name!r}; name them alike")
        found.append(definition)
    return found


def all_operations() -> tuple[Operation, ...]:
    return tuple(sorted(_registered.values(), key=lambda op: op.rank))


def operation_names() -> tuple[str, ...]:
    return tuple(op.name for op in all_operations())


def batch_operation_names() -> tuple[str, ...]:
    return tuple(op.name for op in all_operations() if op.batchable)


def operation_named(name: str) -> Operation:
    """The definition of `name`; KeyError, a LookupError, if there is none (a stored action's
    operation always has one: it was parsed at prepare, unless an upgrade retired it)."""
    return _registered[name]


def parse_operation(operation: Any, arguments: Any) -> tuple[Operation, Args]:
    """The named operation and its arguments, refused unless they are exactly its keys."""
    if not isinstance(operation, str) or operation not in _registered:
        raise invalid(
            "operation", f"{operation!r} is not an operation; use one of {sorted(_registered)}."
        )
    op = _registered[operation]
    if not isinstance(arguments, dict):
        raise invalid("arguments", f"must be a JSON object with keys {list(op.keys)}.")
    given, wanted = set(arguments), set(op.keys)
    if given != wanted:
        differ = (("missing", wanted - given), ("unexpected", given - wanted))
        parts = "; ".join(f"{word} {sorted(keys)}" for word, keys in differ if keys)
        raise invalid("arguments", f"{operation} takes exactly {list(op.keys)}: {parts}.")
    return op, arguments


for _definition in discover(__name__, __path__):
    register(_definition)
