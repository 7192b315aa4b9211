"""What one prepared operation would change, as a reviewer reads it, and its one-line summary.

Every operation says what it would change as plain data (workflow.operations.change); this
module turns that into names and short values, the same way for every operation, so nothing
here knows an operation by name. Updates are compared with the record as it is now (for a
write still awaiting a decision that is exactly what approving would overwrite). The summary is
the same picture squeezed into a line for the queue ("update Kirat: stage onsite → offer").

A reviewer reads names, not IDs: the review page and the queue's summaries collect every ID
they will show first, then fetch them together in one Lookup, so a 100-row import or a page of
100 actions costs the same two queries as one write.

The queue's list draws six short columns without loading the stored JSON behind them: a
prepared import keeps every row, its review and its preview, and a list page of 100 such actions
used to read megabytes to draw one line each. The big JSON columns are deferred and the one-line
summary is drawn from small extracts the database cuts out of `arguments` (each kind's first
write and count); each action's state is a badge a person reads at a glance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.admin.views.main import ChangeList
from django.db.models import Case, IntegerField, JSONField, QuerySet, When
from django.db.models.fields.json import KeyTextTransform
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from records.admin.common import shorten
from records.admin.timeline import FieldChange, show
from records.ids import is_valid_id
from records.models import Collection, Record
from workflow.action_kinds import KINDS, SINGLE, Kind, Write, kind_of
from workflow.models import OPEN_STATES, ActionState, PreparedAction
from workflow.operations import operation_named, operation_names
from workflow.operations.change import FieldChange as FieldData
from workflow.operations.checks import REFERENCE

VALUE_LIMIT = 300
SUMMARY_LIMIT = 120


@dataclass(frozen=True)
class Ref:
    """A record or collection as a reviewer sees it: its name, linked, or the bare ID if gone."""

    id: str
    title: str
    url: str
    note: str = ""  # "archived", "collection: people", "no longer exists"


@dataclass
class Lookup:
    workspace_id: str | None
    records: dict[str, Record]
    collections: dict[str, str]

    @classmethod
    def load(
        cls,
        workspace_id: str | None,
        record_ids: Iterable[Any],
        collection_ids: Iterable[Any] = (),
    ) -> Lookup:
        """workspace_id None: IDs named by actions of several workspaces (a queue page whose
        rows the person may all see; IDs are unique across workspaces)."""
        where = {} if workspace_id is None else {"workspace_id": workspace_id}
        wanted_records = {str(i) for i in record_ids if is_valid_id(i)}
        shown = ("id", "title", "data", "version", "archived_at", "collection_id")
        records = Record.objects.filter(**where).only(*shown).in_bulk(wanted_records)
        wanted_collections = {str(i) for i in collection_ids if is_valid_id(i)}
        wanted_collections |= {r.collection_id for r in records.values()}
        collections = dict(
            Collection.objects.filter(pk__in=wanted_collections, **where).values_list("id", "name")
        )
        return cls(workspace_id, records, collections)

    def record(self, record_id: Any) -> Record | None:
        return self.records.get(str(record_id))

    def title(self, record_id: Any) -> str:
        record = self.record(record_id)
        return record.title if record else str(record_id)

    def record_ref(self, record_id: Any) -> Ref:
        record = self.record(record_id)
        if record is None and isinstance(record_id, str) and REFERENCE.fullmatch(record_id):
            return Ref(record_id, f"the record {record_id} creates", "", "in this batch")
        if record is None:
            return Ref(str(record_id), str(record_id), "", "no such record now")
        where = self.collections.get(record.collection_id, "")
        note = "archived" if record.archived_at else ""
        return Ref(
            record.pk,
            record.title,
            reverse("admin:records_record_change", args=[record.pk]),
            ", ".join(n for n in (where, note) if n),
        )

    def collection_ref(self, collection_id: Any) -> Ref:
        name = self.collections.get(str(collection_id))
        if name is None:
            return Ref(str(collection_id), str(collection_id), "", "no such collection now")
        url = reverse("admin:records_collection_change", args=[collection_id])
        return Ref(str(collection_id), name, url, "collection")


@dataclass
class OperationReview:
    """One operation as a reviewer reads it."""

    verb: str
    target: Ref | None = None
    changes: list[FieldChange] = field(default_factory=list)
    links: list[tuple[Ref, str, Ref]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    created_in: Ref | None = None  # a new record's collection
    summary: str = ""  # what the operation does, in its definition's words


def _shown(change: FieldData) -> FieldChange:
    before = "" if change.kind == "added" else show(change.before, VALUE_LIMIT)
    after = "" if change.kind == "removed" else show(change.after, VALUE_LIMIT)
    return FieldChange(change.path, change.kind, before, after)


def ids_named(operations: Iterable[tuple[str, dict[str, Any]]]) -> tuple[set[str], set[str]]:
    """The records and collections these (operation, arguments) name, to fetch in one Lookup."""
    known = operation_names()
    named = [operation_named(op).named_ids(args) for op, args in operations if op in known]
    return set[str]().union(*(r for r, _ in named)), set[str]().union(*(c for _, c in named))


def review_operation(operation: str, args: dict[str, Any], lookup: Lookup) -> OperationReview:
    if operation not in operation_names():  # a stored action of an operation since retired
        return OperationReview(operation.replace("_", " "))
    definition = operation_named(operation)
    change = definition.change(args, lookup)
    review = OperationReview(change.verb, summary=definition.summary)
    if change.record_id:
        review.target = lookup.record_ref(change.record_id)
    elif change.collection_id:
        review.target = lookup.collection_ref(change.collection_id)
    if change.created_in:
        review.created_in = lookup.collection_ref(change.created_in)
        review.notes.append(f"in {review.created_in.title}")
    review.changes = [_shown(c) for c in change.fields]
    for link in change.links:
        if link.source_id is None or link.target_id is None:  # a link named by its ID alone
            review.notes.append(f"relationship {link.relationship_id}")
            continue
        source, target = lookup.record_ref(link.source_id), lookup.record_ref(link.target_id)
        review.links.append((source, show(link.relationship_type, VALUE_LIMIT), target))
    review.notes += change.notes
    return review


def one_line(review: OperationReview, *, against_current: bool = True) -> str:
    """'update Kirat: stage onsite → offer'. Decided writes drop the before side: the record
    has moved on and "before" would be today's value, not the one the write replaced."""
    if review.created_in is not None:
        title = next((c.after for c in review.changes if c.path == "title"), "")
        text = f"{review.verb} {title} {review.notes[0]}".strip()
        return shorten(text, SUMMARY_LIMIT)
    head = review.verb
    if review.target is not None:
        head = f"{head} {review.target.title}"
    for source, kind, target in review.links:
        head = f"{head} {source.title} —{kind}→ {target.title}"
    if review.notes and review.target is None and not review.links:
        head = f"{head} {review.notes[0]}"
    parts = []
    for change in review.changes:
        if change.kind == "added":
            parts.append(f"{change.path} = {change.after}")
        elif change.kind == "removed":
            parts.append(f"{change.path} removed")
        elif against_current and change.before:
            parts.append(f"{change.path} {change.before} → {change.after}")
        else:
            parts.append(f"{change.path} → {change.after}")
    return shorten(f"{head}: {', '.join(parts)}" if parts else head, SUMMARY_LIMIT)


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
