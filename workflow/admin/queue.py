"""The approval queue's list: six short columns without loading the stored JSON behind them.

A prepared import keeps every row, its review and its preview; a list page of 100 such actions
used to read megabytes to draw one line each. Here the big JSON columns are deferred and the
one-line summary is drawn from small extracts the database cuts out of `arguments` (a single
write's arguments, a batch's first item, an import's row count), with the titles they name
fetched for the whole page at once.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.main import ChangeList
from django.db.models import Case, F, Func, IntegerField, JSONField, QuerySet, Value, When
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.http import HttpRequest

from workflow import imports
from workflow.actions import BATCH
from workflow.admin.changes import ids_named, one_line, review_operation
from workflow.admin.lookup import Lookup
from workflow.models import OPEN_STATES, PreparedAction

BIG_JSON = ("arguments", "preview", "evidence", "counters", "result", "review_ids")
WHOLE = (BATCH, imports.OPERATION)


class JSONArrayLength(Func):
    """Length of a JSON array: json_array_length on SQLite, jsonb_array_length on PostgreSQL."""

    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


def queue_rows(queryset: QuerySet[PreparedAction]) -> QuerySet[PreparedAction]:
    single = Case(
        When(operation__in=WHOLE, then=Value(None)),
        default=F("arguments"),
        output_field=JSONField(),
    )
    items = KeyTransform("items", "arguments")
    return queryset.defer(*BIG_JSON).annotate(
        summary_arguments=single,
        first_item=Case(
            When(operation=BATCH, then=KeyTransform("0", items)),
            default=Value(None),
            output_field=JSONField(),
        ),
        item_count=Case(
            When(operation=BATCH, then=JSONArrayLength(items)),
            When(
                operation=imports.OPERATION, then=JSONArrayLength(KeyTransform("rows", "arguments"))
            ),
            default=Value(0),
        ),
        import_collection=KeyTextTransform("collection_id", "arguments"),
    )


def _operation_of(action: Any) -> tuple[str, dict[str, Any]] | None:
    if action.operation == BATCH:
        item = action.first_item if isinstance(action.first_item, dict) else {}
        return item.get("operation", ""), item.get("arguments") or {}
    if action.operation == imports.OPERATION:
        return None
    return action.operation, action.summary_arguments or {}


def summarise(actions: list[Any]) -> None:
    """Give every action on the page its one-line summary, in two queries for the page."""
    records: set[str] = set()
    collections: set[str] = set()
    for action in actions:
        named = _operation_of(action)
        if named is None:
            collections.add(action.import_collection or "")
            continue
        named_records, named_collections = ids_named([named])
        records |= named_records
        collections |= named_collections
    lookup = Lookup.load(None, records, collections)
    for action in actions:
        pending = action.state in OPEN_STATES
        named = _operation_of(action)
        if named is None:
            where = lookup.collection_ref(action.import_collection).title
            count = action.item_count or 0
            action.anchor_summary = f"import {count} row{'s' if count != 1 else ''} into {where}"
            continue
        line = one_line(review_operation(*named, lookup), against_current=pending)
        if action.operation == BATCH and (action.item_count or 0) > 1:
            line = f"{action.item_count} writes: {line}; …"
        action.anchor_summary = line


class QueueChangeList(ChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> Any:
        return queue_rows(super().get_queryset(request, exclude_parameters))

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        summarise(list(self.result_list))
