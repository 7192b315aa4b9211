"""What a kind of prepared action defines: the base holds the defaults each kind overrides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Func, IntegerField, Value

from records.approval import Touched
from records.errors import STALE_REVIEW, AnchorError
from workflow.models import PreparedAction, ReviewTicket
from workflow.operations import Operation, operation_named
from workflow.scope import Scope


@dataclass(frozen=True)
class Write:
    """One operation inside an action, as the admin shows it."""

    index: int | None
    operation: str
    arguments: dict[str, Any]
    reason: str = ""
    clarification: str = ""


@dataclass
class Prepared:
    """An unsaved action, its cited reviews, what its prepare answer says before the common
    part, and the revisions its own review holds."""

    action: PreparedAction
    tickets: list[ReviewTicket]
    head: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)


class JSONArrayLength(Func):
    """Length of a JSON array: json_array_length on SQLite, jsonb_array_length on PostgreSQL."""

    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


class Kind:
    name = ""  # its PreparedAction.operation (a single write's is its operation's name)
    prepare_tool = ""
    commit_tool = ""
    max_bytes: int | None = None  # of its arguments as canonical JSON, checked at prepare
    # What the approval queue's one-line summary reads, cut out of the arguments by the
    # database (they are not loaded there): its first write, and how many it holds.
    first_write: Any = Value(None)
    count: Any = Value(0)
    shows_events = True  # once applied, its review lists its audit events
    # Its own part of the review page (an import's rows): a function (action, Lookup) -> a view
    # with a `summary`, by dotted path, since the admin imports the kinds and not the reverse.
    review_view = ""
    # (scope, the prepare tool's arguments) -> the unsaved action
    prepare: Callable[..., Prepared]
    # (action, the commit tool's arguments beyond action_id): stored before its checks
    before_commit: Callable[..., None] = staticmethod(lambda action: None)
    # (scope, action, its cited tickets) -> what the write touches; raises when its evidence fails
    check: Callable[[Scope, PreparedAction, list[ReviewTicket]], Touched]
    # (ctx, action, approved=a person approves it) -> its result, in the caller's transaction
    apply: Callable[..., dict[str, Any]]
    # (scope, the commit's answer) -> it with fresh reviews of what it made (also on replay)
    after_commit: Callable[[Scope, dict[str, Any]], dict[str, Any]]
    size: Callable[[dict[str, Any]], int]  # (its arguments) -> how many writes or rows it holds

    def own_collection(self, arguments: dict[str, Any]) -> str | None:
        """The collection whose names its own review (beyond its tickets) checks."""
        return None

    def own_changes(self, action: PreparedAction) -> list[str]:
        """What changed in that review since prepare, once a name there moved."""
        return []

    def writes(self, action: PreparedAction) -> list[Write]:
        return []

    def first(self, extract: Any, operation: str) -> Write | None:
        """Its first write, from the queue's `first_write` extract."""
        return None

    def summary(self, size: int, collection: str) -> str:
        """The one-line summary of a kind that holds no single writes."""
        return ""

    def touches(self, arguments: Any) -> set[str]:
        """The existing records it changes or links beyond those its writes name."""
        return set()

    def shown_ids(self, action: PreparedAction) -> tuple[set[str], set[str]]:
        """Beyond its writes: the records and collections its review names."""
        return set(), set()

    def pins_version(self, arguments: Any, record_id: str) -> bool:
        """Checked against this record's exact version: any save of the record makes it stale."""
        return (
            isinstance(arguments, dict)
            and arguments.get("record_id") == record_id
            and "expected_version" in arguments
        )


def still_defined(action: PreparedAction, name: str) -> Operation:
    """A stored action's operation. An upgrade may have retired it: the action can then never
    be applied as prepared, so it is stale."""
    try:
        return operation_named(name)
    except LookupError:
        raise AnchorError(
            STALE_REVIEW,
            f"The operation {name!r} no longer exists in this version of Anchor, so this write "
            "cannot be applied as prepared. Prepare it again with a current operation.",
            action_id=action.pk,
            operation=name,
        ) from None
