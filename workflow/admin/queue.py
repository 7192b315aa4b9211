"""The approval queue's list: six short columns without loading the stored JSON behind them,
and each action's state as a badge a person reads at a glance.

A prepared import keeps every row, its review and its preview; a list page of 100 such actions
used to read megabytes to draw one line each. Here the big JSON columns are deferred and the
one-line summary is drawn from small extracts the database cuts out of `arguments` (each
kind's first write and count), with the titles they name fetched for the whole page at once.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.main import ChangeList
from django.db.models import Case, IntegerField, JSONField, QuerySet, When
from django.db.models.fields.json import KeyTextTransform
from django.http import HttpRequest
from django.utils.html import format_html

from workflow.action_kinds import KINDS, SINGLE, Kind, Write, kind_of
from workflow.admin.changes import Lookup, ids_named, one_line, review_operation
from workflow.models import OPEN_STATES, ActionState, PreparedAction

BIG_JSON = ("arguments", "preview", "evidence", "counters", "result", "review_ids")
BADGES: dict[str, tuple[str, str]] = {
    ActionState.AWAITING_APPROVAL: ("awaiting your decision", "anchor-agent"),
    ActionState.COMMITTED: ("applied", "anchor-ok"),
    ActionState.REJECTED: ("rejected", "anchor-bad"),
    ActionState.STALE: ("stale: can no longer apply", "anchor-bad"),
    ActionState.PREPARED: ("prepared, not committed", ""),
}


def state_badge(state: str) -> str:
    label, css = BADGES.get(state, (state, ""))
    return format_html('<span class="anchor-badge {}">{}</span>', css, label)


def _by_kind(part: str, output_field: Any) -> Case:
    whens = [When(operation=name, then=getattr(kind, part)) for name, kind in KINDS.items()]
    return Case(*whens, default=getattr(SINGLE, part), output_field=output_field)


def queue_rows(queryset: QuerySet[PreparedAction]) -> QuerySet[PreparedAction]:
    return queryset.defer(*BIG_JSON).annotate(
        first_write=_by_kind("first_write", JSONField()),
        item_count=_by_kind("count", IntegerField()),
        collection_named=KeyTextTransform("collection_id", "arguments"),
    )


def headline(
    kind: Kind, first: Write | None, count: int, collection: str, lookup: Lookup, pending: bool
) -> str:
    """The one-line summary of an action: its first write (and how many it holds), or its
    kind's own line when it holds none."""
    if first is None:
        return kind.summary(count, collection)
    line = one_line(
        review_operation(first.operation, first.arguments, lookup), against_current=pending
    )
    return f"{count} writes: {line}; …" if count > 1 else line


def summarise(actions: list[Any]) -> None:
    """Give every action on the page its one-line summary, in two queries for the page."""
    firsts = {a.pk: kind_of(a.operation).first(a.first_write, a.operation) for a in actions}
    records, collections = ids_named((f.operation, f.arguments) for f in firsts.values() if f)
    collections |= {a.collection_named or "" for a in actions if firsts[a.pk] is None}
    lookup = Lookup.load(None, records, collections)
    for action in actions:
        where = lookup.collection_ref(action.collection_named).title
        action.anchor_summary = headline(
            kind_of(action.operation),
            firsts[action.pk],
            action.item_count or 0,
            where,
            lookup,
            action.state in OPEN_STATES,
        )


class QueueChangeList(ChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> Any:
        return queue_rows(super().get_queryset(request, exclude_parameters))

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        summarise(list(self.result_list))
