"""Which waiting writes a landed write may have made stale, found from what it changed.

A waiting write can go stale only through what it depends on: the revision counters its cited
reviews (and an import's own duplicate review) hold, and the records it names (their version
and standing). A landed write moves some counters and writes some records, both known inside
its transaction: the counters the waiting writes watch are read before and after it. Only the
waiting writes depending on one of them are candidates. A review whose only moved counter is
a names counter is first asked whether the names this write changed could change its answer,
matched against its query alone (workflow.names.delta, each changed name read once for all of
them); every other candidate is checked by the caller exactly as an approval would, so what
goes stale is still decided by the freshness rule, never by this filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.counters import ALL_NAMES, CATALOG, counter_values, links_key, names_key
from records.models import Record
from workflow.action_kinds import kind_of
from workflow.decision_audit import named_ids
from workflow.models import ActionState, PreparedAction, ReviewTicket
from workflow.names.delta import names_since_leave_standing


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
    waiting = (
        PreparedAction.objects.filter(
            workspace_id=landed.workspace_id, state=ActionState.AWAITING_APPROVAL
        )
        .exclude(pk=exclude)
        .order_by("created_at")
    )
    if CATALOG in moved:  # a collection changed: rare, and any write may rest on it
        return list(waiting.values_list("pk", flat=True))
    rows = list(waiting.values_list("pk", "operation", "arguments", "counters", "review_ids"))
    # Just what the names check reads, built without the ORM's per-row machinery.
    fields = ("id", "workspace_id", "kind", "request", "answer", "counters")
    cited = {r for *_, counters, review_ids in rows if moved & set(counters) for r in review_ids}
    tickets = {
        row[0]: ReviewTicket(**dict(zip(fields, row, strict=True)))
        for row in ReviewTicket.objects.filter(pk__in=cited).values_list(*fields)
    }
    memo: dict[Any, Any] = {}

    def stands(operation: str, arguments: Any, counters: Any, review_ids: list[str]) -> bool:
        hit = moved & set(counters)
        if not hit:
            return True
        own = kind_of(operation).own_collection(arguments)
        if (own and names_key(own) in hit) or any(r not in tickets for r in review_ids):
            return False  # an import's own review of its rows moved, or a review is gone
        return all(_stands(landed, tickets[r], hit, memo) for r in review_ids)

    return [pk for pk, *row in rows if set(named_ids(row[1])) & landed.records or not stands(*row)]


def _stands(landed: Landed, ticket: ReviewTicket, hit: set[str], memo: dict[Any, Any]) -> bool:
    if not hit & set(ticket.counters):
        return True
    if any(key not in landed.before for key in hit & set(ticket.counters)):
        return False  # moved from a value not read: only the whole re-run can say
    expected = {key: landed.before.get(key, 0) for key in ticket.counters}
    current = {key: landed.after.get(key, expected[key]) for key in ticket.counters}
    return names_since_leave_standing(ticket, expected, current, memo)
