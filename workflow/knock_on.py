"""Which waiting writes a landed write may have made stale, found from what it changed.

A waiting write can go stale only through what it depends on: the revision counters its cited
reviews (and an import's own duplicate review) hold, and the records it names (their version
and standing). A landed write moves some counters and writes some records, both known inside
its transaction: the counters the waiting writes watch are read before and after it. Only the
waiting writes depending on one of them are candidates. A review whose only moved counter is
a names counter is first asked whether the names this write changed could change its answer,
matched against its query alone (workflow.name_delta, each changed name read once for all of
them); every other candidate is checked by the caller exactly as an approval would, so what
goes stale is still decided by the freshness rule, never by this filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.counters import ALL_NAMES, CATALOG, counter_values, links_key, names_key
from records.models import Record
from workflow import imports
from workflow.decision_audit import named_ids
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.name_delta import names_since_leave_standing

IMPORT = imports.OPERATION


@dataclass
class Landed:
    """What one write changed: the counters it may move, before and after it (one read each,
    of a few keys), and the records it wrote whose version moved."""

    workspace_id: str
    before: dict[str, int]
    after: dict[str, int] = field(default_factory=dict)
    records: set[str] = field(default_factory=set)

    def finish(self, written: set[str]) -> None:
        """Inside the write's transaction, after it applied. A key the write moved that was
        not foreseen has no value before: it counts as moved, and its reviews are re-run."""
        rows = Record.objects.filter(workspace_id=self.workspace_id, pk__in=written)
        keys = set(self.before)
        for pk, collection_id, version in rows.values_list("pk", "collection_id", "version"):
            keys |= {links_key(pk), names_key(collection_id)}
            if version > 1:  # a new record is named by no waiting write
                self.records.add(pk)
        self.after = counter_values(self.workspace_id, keys)

    def moved(self) -> set[str]:
        return {key for key, value in self.after.items() if self.before.get(key) != value}


def watch(action: PreparedAction) -> Landed:
    """Before `action` applies: the counters its write may move, as they stand."""
    keys = {CATALOG, ALL_NAMES}
    keys |= {names_key(c) for c in action.collection_ids}
    keys |= {links_key(r) for r in named_ids(action.arguments)}
    return Landed(action.workspace_id, counter_values(action.workspace_id, keys))


def candidates(landed: Landed, exclude: str = "") -> list[str]:
    """The waiting writes, oldest first, whose answer the landed write may have changed."""
    moved = landed.moved()
    if not moved and not landed.records:
        return []
    waiting = PreparedAction.objects.filter(
        workspace_id=landed.workspace_id, state=ActionState.AWAITING_APPROVAL
    ).exclude(pk=exclude)
    rows = list(
        waiting.order_by("created_at").values_list("pk", "operation", "counters", "review_ids")
    )
    if CATALOG in moved:  # a collection changed: rare, and any write may rest on it
        return [row[0] for row in rows]
    hit = {pk: moved & set(counters) for pk, _, counters, _ in rows}
    # Arguments only where they matter: the records a write names, an import's collection.
    reading = [pk for pk, operation, _, _ in rows if landed.records or operation == IMPORT]
    arguments = dict(waiting.filter(pk__in=reading).values_list("pk", "arguments"))
    # Just what the names check reads, built without the ORM's per-row machinery: with a long
    # queue this is most of the check's cost.
    fields = ("id", "workspace_id", "kind", "request", "answer", "counters")
    tickets = {
        row[0]: ReviewTicket(**dict(zip(fields, row, strict=True)))
        for row in ReviewTicket.objects.filter(
            pk__in={r for pk, _, _, review_ids in rows if hit[pk] for r in review_ids}
        ).values_list(*fields)
    }
    memo: dict[Any, Any] = {}

    def stands(pk: str, operation: str, review_ids: list[str]) -> bool:
        if operation == IMPORT and names_key(arguments[pk]["collection_id"]) in hit[pk]:
            return False  # the import's own duplicate review of its rows moved
        return all(
            r in tickets and _stands(landed, tickets[r], hit[pk], memo) for r in review_ids
        )  # a review gone (purged) is for the full check to judge

    return [
        pk
        for pk, operation, _, review_ids in rows
        if (landed.records and set(named_ids(arguments[pk])) & landed.records)
        or (hit[pk] and not stands(pk, operation, review_ids))
    ]


def _stands(landed: Landed, ticket: ReviewTicket, hit: set[str], memo: dict[Any, Any]) -> bool:
    if not hit & set(ticket.counters):
        return True
    if any(key not in landed.before for key in hit & set(ticket.counters)):
        return False  # moved from a value not read: only the whole re-run can say
    expected = {key: landed.before.get(key, 0) for key in ticket.counters}
    current = {key: landed.after.get(key, expected[key]) for key in ticket.counters}
    return names_since_leave_standing(ticket, expected, current, memo)
