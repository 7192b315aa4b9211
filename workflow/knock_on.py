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

from django.db.models import QuerySet

from records.counters import CATALOG, counter_values, moved_counters, names_key
from workflow import imports
from workflow.decision_audit import named_ids
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.name_delta import names_since_leave_standing


@dataclass
class Landed:
    """What one write changed: the watched counters before and after it, the records it wrote."""

    workspace_id: str
    before: dict[str, int]
    after: dict[str, int] = field(default_factory=dict)
    records: set[str] = field(default_factory=set)

    def finish(self, written: set[str]) -> None:
        """Inside the write's transaction, after it applied."""
        self.after = counter_values(self.workspace_id, self.before)
        self.records = set(written)

    def moved(self) -> set[str]:
        return set(moved_counters(self.before, self.after))


def _waiting(workspace_id: str, exclude: str = "") -> QuerySet[PreparedAction]:
    return PreparedAction.objects.filter(
        workspace_id=workspace_id, state=ActionState.AWAITING_APPROVAL
    ).exclude(pk=exclude)


def watch(workspace_id: str, exclude: str = "") -> Landed:
    """Before a write: the counters every other waiting write depends on, as they stand."""
    keys = {CATALOG}
    for counters in _waiting(workspace_id, exclude).values_list("counters", flat=True):
        keys.update(counters)
    return Landed(workspace_id, counter_values(workspace_id, keys))


def candidates(landed: Landed, exclude: str = "") -> list[str]:
    """The waiting writes, oldest first, whose answer the landed write may have changed."""
    moved = landed.moved()
    if not moved and not landed.records:
        return []
    rows = list(
        _waiting(landed.workspace_id, exclude)
        .order_by("created_at")
        .values_list("pk", "operation", "arguments", "counters", "review_ids")
    )
    if CATALOG in moved:  # a collection changed: rare, and any write may rest on it
        return [row[0] for row in rows]
    hit = {row[0]: moved & set(row[3]) for row in rows}
    tickets = {
        t.pk: t
        for t in ReviewTicket.objects.filter(
            pk__in={r for row in rows if hit[row[0]] for r in row[4]}
        )
    }
    memo: dict[Any, Any] = {}

    def stands(pk: str, operation: str, arguments: Any, review_ids: list[str]) -> bool:
        if operation == imports.OPERATION and names_key(arguments["collection_id"]) in hit[pk]:
            return False  # the import's own duplicate review of its rows moved
        return all(
            r in tickets and _stands(landed, tickets[r], hit[pk], memo) for r in review_ids
        )  # a review gone (purged) is for the full check to judge

    return [
        pk
        for pk, operation, arguments, _, review_ids in rows
        if set(named_ids(arguments)) & landed.records
        or (hit[pk] and not stands(pk, operation, arguments, review_ids))
    ]


def _stands(landed: Landed, ticket: ReviewTicket, hit: set[str], memo: dict[Any, Any]) -> bool:
    if not hit & set(ticket.counters):
        return True
    expected = {key: landed.before.get(key, 0) for key in ticket.counters}
    current = {key: landed.after.get(key, 0) for key in ticket.counters}
    return names_since_leave_standing(ticket, expected, current, memo)

