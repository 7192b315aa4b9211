"""The shapes of the tools' nested arguments, as types: pydantic publishes them as JSON Schema,
and `workflow.mcp.arguments` checks every call against that same schema, where each object
refuses unknown keys unless it allows them (`workflow.mcp.tool_list`). Bounds come from the
modules that enforce them again below the boundary.
"""

# No `from __future__ import annotations`: pydantic reads these TypedDicts at class creation.

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from records.selectors.aggregation import MAX_METRICS, METRIC_OPS
from records.selectors.arguments import DIRECTIONS, MAX_FIELD_DEPTH, MAX_RELATIONSHIP_TYPES
from records.selectors.conditions import MAX_CONDITIONS, OPERATORS
from workflow.batch_read import READS
from workflow.imports import MAX_KEY
from workflow.operations import batch_operation_names
from workflow.resolution import MAX_CONTEXT_RECORDS
from workflow.tickets import MAX_REVIEW_IDS


def one_of(values: tuple[str, ...], description: str = "") -> Any:
    """A string limited to `values` (kept as data, so the enforcing module stays the source)."""
    extra: dict[str, Any] = {"enum": list(values)}
    return Annotated[str, Field(description=description or None, json_schema_extra=extra)]


FieldPath = Annotated[
    list[str],
    Field(
        min_length=1,
        max_length=MAX_FIELD_DEPTH,
        description='Keys from the top of data, e.g. ["offer", "ctc"] (never "offer.ctc").',
    ),
]
# The same path without the words: described once, on Condition.field, since every tool that
# takes one of the others also publishes Condition and each copy costs tokens in the tool list.
FieldKeys = Annotated[list[str], Field(min_length=1, max_length=MAX_FIELD_DEPTH)]
RelationshipTypes = Annotated[list[str], Field(min_length=1, max_length=MAX_RELATIONSHIP_TYPES)]
Direction = one_of(DIRECTIONS)


class Condition(TypedDict):
    field: FieldPath
    op: one_of(OPERATORS)  # type: ignore[valid-type]
    value: NotRequired[Any]


Conditions = Annotated[list[Condition], Field(min_length=1, max_length=MAX_CONDITIONS)]


class LinkedTo(TypedDict):
    record_id: str
    relationship_types: NotRequired[RelationshipTypes]
    direction: NotRequired[Direction]  # type: ignore[valid-type]


class OrderBy(TypedDict):
    field: FieldKeys
    type: Literal["number", "string"]
    direction: NotRequired[Literal["asc", "desc"]]


class Metric(TypedDict):
    op: one_of(METRIC_OPS)  # type: ignore[valid-type]
    field: NotRequired[FieldKeys]


Metrics = Annotated[list[Metric], Field(min_length=1, max_length=MAX_METRICS)]


class GroupByField(TypedDict):
    field: FieldKeys
    bucket: NotRequired[Literal["month", "year"]]


class GroupByCollection(TypedDict):
    collection: Literal[True]


class LinkedGroup(TypedDict):
    relationship_types: NotRequired[RelationshipTypes]
    direction: NotRequired[Direction]  # type: ignore[valid-type]


class GroupByLinked(TypedDict):
    linked: LinkedGroup


GroupBy = GroupByField | GroupByCollection | GroupByLinked


# --- batch items ------------------------------------------------------------------------------


def batch_of(item: Any, description: str) -> Any:
    return Annotated[list[item], Field(description=description, min_length=1, max_length=10)]


Ids = Annotated[list[str], Field(max_length=MAX_CONTEXT_RECORDS)]


class ResolveRequest(TypedDict):
    query: str
    collection_id: NotRequired[str | None]
    context_record_ids: NotRequired[Ids | None]
    ask_user: NotRequired[bool]


@with_config(ConfigDict(extra="allow"))
class ReadRequest(TypedDict):
    # The read tool's own arguments sit beside `operation`, checked as that tool checks them.
    # (A comment, not a docstring: the docstring would be published, repeating `requests`.)
    operation: one_of(tuple(READS))  # type: ignore[valid-type]
    include_context: NotRequired[bool]


class BatchAction(TypedDict):
    operation: one_of(batch_operation_names())  # type: ignore[valid-type]
    arguments: dict[str, Any]
    review_ids: NotRequired[Annotated[list[str], Field(max_length=MAX_REVIEW_IDS)]]
    decision_reason: str
    clarification: NotRequired[str | None]


# --- imports ----------------------------------------------------------------------------------


class ImportRow(TypedDict):
    key: NotRequired[Annotated[str, Field(max_length=MAX_KEY)]]
    title: str
    data: NotRequired[dict[str, Any]]


class RowEnd(TypedDict):
    row: str


class RecordEnd(TypedDict):
    record_id: str


class ImportLink(TypedDict):
    source: RowEnd | RecordEnd
    relationship_type: str
    target: RowEnd | RecordEnd


class Skip(TypedDict):
    decision: Literal["skip"]


class UseExisting(TypedDict):
    decision: Literal["use_existing"]
    record_id: str


class CreateAnyway(TypedDict):
    decision: Literal["create_anyway"]
    clarification: NotRequired[str]


Decision = Skip | UseExisting | CreateAnyway
