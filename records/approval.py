"""The approval gate every door calls: which collections a write touches, and whether it waits.

A collection marked requires_approval holds every agent write touching it (a record in it, a
link with either end in it); a person's own write applies directly. Doors say what they touch
and the collections are looked up when asked, so a commit sees the gates as they are then.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection

from records.models import Collection, Record, Relationship
from records.selectors.scoped import values_by_id

AGENT = "agent"
PERSON = "person"


@dataclass(frozen=True)
class Touched:
    """What one write changes or links to, named by ID; collections are derived on demand."""

    collection_ids: frozenset[str] = frozenset()
    record_ids: frozenset[str] = frozenset()
    relationship_ids: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        *,
        collections: Iterable[str] = (),
        records: Iterable[str] = (),
        relationships: Iterable[str] = (),
    ) -> Touched:
        return cls(frozenset(collections), frozenset(records), frozenset(relationships))

    def __or__(self, other: Touched) -> Touched:
        return Touched(
            self.collection_ids | other.collection_ids,
            self.record_ids | other.record_ids,
            self.relationship_ids | other.relationship_ids,
        )


NOTHING = Touched()


def collections_touched(workspace_id: str, touched: Touched) -> list[str]:
    """Every collection the write touches: its own, its records', both ends of its links."""
    ids = set(touched.collection_ids)
    for row in values_by_id(
        Record.objects, workspace_id=workspace_id, ids=touched.record_ids, fields=["collection_id"]
    ):
        ids.add(row["collection_id"])
    for row in values_by_id(
        Relationship.objects,
        workspace_id=workspace_id,
        ids=touched.relationship_ids,
        fields=["source__collection_id", "target__collection_id"],
    ):
        ids.update(row.values())
    return sorted(ids)


def hold_gates_steady(workspace_id: str, collection_ids: Iterable[str]) -> dict[str, bool]:
    """Share-lock these collections' rows until the transaction ends, so no gate changes under
    a decided commit (commits do not block each other); returns each locked collection's gate.
    Callers take it before the revision counters, in the order a gate change does. Not on
    SQLite, whose write transactions run one at a time."""
    ids = sorted(set(collection_ids))
    if not ids or connection.vendor != "postgresql" or not connection.in_atomic_block:
        return {}  # outside a transaction a lock would end with the statement
    table = connection.ops.quote_name(Collection._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, requires_approval FROM {table} WHERE workspace_id = %s AND id = ANY(%s) "
            "ORDER BY id FOR SHARE",
            [workspace_id, ids],
        )
        return {str(pk): bool(gated) for pk, gated in cursor.fetchall()}


def approval_required(workspace_id: str, collection_ids: Iterable[str]) -> list[str]:
    """The collections among these that need a person's approval (empty: none does)."""
    return sorted(
        Collection.objects.filter(
            workspace_id=workspace_id, pk__in=list(collection_ids), requires_approval=True
        ).values_list("pk", flat=True)
    )


@dataclass(frozen=True)
class Decision:
    hold: bool  # else apply
    gated: list[str]  # the gated collections the write touches, whoever writes


def decide(
    workspace_id: str,
    collection_ids: Iterable[str],
    *,
    actor: str,
    held: dict[str, bool] | None = None,
) -> Decision:
    """Apply or hold a write by `actor` (AGENT or PERSON) touching these collections; inside a
    transaction the answer stands until it ends. `held`: gates already locked and read by
    hold_gates_steady in this transaction."""
    if actor not in (AGENT, PERSON):
        raise ValueError(f"actor must be {AGENT!r} or {PERSON!r}, not {actor!r}")
    collection_ids = sorted(set(collection_ids))
    gates = dict(held or {})
    gates |= hold_gates_steady(workspace_id, [c for c in collection_ids if c not in gates])
    if all(c in gates for c in collection_ids):
        gated = [c for c in collection_ids if gates[c]]
    else:
        gated = approval_required(workspace_id, collection_ids)
    return Decision(bool(gated) and actor == AGENT, gated)
