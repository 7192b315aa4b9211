"""Is a review still true? Counters are the fast path; a moved one means re-evaluate and compare.

A ticket records the revision counters its answer depended on. While none has moved the answer
stands. When only a resolution's names counter moved, the names written since are matched
against its query alone (workflow.names.delta): none a candidate and none matching, it stands.
Otherwise the review is evaluated again with the same request and the same rules
(resolution.evaluate_resolution, discovery.evaluate_discovery) and the two answers compared: a
resolution stays valid when no candidate appeared, vanished, or changed its standing (title,
active or archived, exact or similar); a discovery stays valid when no collection would now be
suggested that was not, and no listed collection changed its name or purpose. Only then is the
review stale (the contract: stale "when something it depends on changes, and only then").

Callers that commit run this inside the write transaction after locking the counters, so the
data re-read is exactly the data the locked values describe.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from records.counters import counter_values, moved_counters
from records.errors import STALE_REVIEW, AnchorError
from workflow.discovery import evaluate_discovery
from workflow.models import ReviewTicket
from workflow.names.delta import names_since_leave_standing
from workflow.resolution import evaluate_resolution
from workflow.scope import Scope

MAX_NAMED_CHANGES = 5


@dataclass
class Changes:
    """What differs between a review's answer and the answer it would get now."""

    texts: list[str] = field(default_factory=list)
    # Candidates (records) or suggestions (collections) the old answer did not have.
    new: list[dict[str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.texts)


def _by_id(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


def resolution_changes(old: dict[str, Any], new: dict[str, Any]) -> Changes:
    """How a resolution's answer moved, in words naming each record."""
    changes = Changes()
    before = _by_id(old.get("candidates", []), "record_id")
    after = _by_id(new.get("candidates", []), "record_id")
    for record_id, candidate in after.items():
        if record_id not in before:
            changes.texts.append(
                f"new {candidate['match']} candidate {candidate['title']!r} ({record_id})"
            )
            changes.new.append({"record_id": record_id, "title": candidate["title"]})
    for record_id, was in before.items():
        now = after.get(record_id)
        label = f"{was['title']!r} ({record_id})"
        if now is None:
            changes.texts.append(f"{label} is no longer a candidate")
            continue
        for key, says in (("title", "titled {!r}"), ("status", "{}"), ("match", "a {} match")):
            if now[key] != was[key]:
                changes.texts.append(f"{label} is now {says.format(now[key])}")
    if not changes and (
        new.get("status") != old.get("status")
        or new.get("selected_record_id") != old.get("selected_record_id")
    ):
        changes.texts.append(f"the status is now {new.get('status')} (was {old.get('status')})")
    return changes


def discovery_changes(old: dict[str, Any], new: dict[str, Any]) -> Changes:
    """How a discovery's answer moved, in words naming each collection."""
    changes = Changes()
    if new.get("status") != old.get("status"):
        changes.texts.append(f"the catalog review is now {new.get('status')}")
    before = _by_id(old.get("suggestions", []), "collection_id")
    for collection_id, suggestion in _by_id(new.get("suggestions", []), "collection_id").items():
        was = before.get(collection_id)
        if was is None:
            changes.texts.append(
                f"collection {suggestion['name']!r} ({collection_id}) would now be suggested"
            )
            changes.new.append({"collection_id": collection_id, "name": suggestion["name"]})
        elif suggestion["exact"] != was["exact"]:
            changes.texts.append(
                f"collection {suggestion['name']!r} ({collection_id}) is now "
                f"{'an exact' if suggestion['exact'] else 'no longer an exact'} match"
            )
    old_prints = old.get("catalog_fingerprints")
    new_prints = new.get("catalog_fingerprints", {})
    if old_prints is None:  # a ticket that kept no fingerprints cannot be compared
        changes.texts.append("the catalog changed")
        return changes
    names = {s["collection_id"]: s["name"] for s in new.get("suggestions", [])}
    for collection_id, fingerprint in old_prints.items():
        label = f"collection {names.get(collection_id, collection_id)!r} ({collection_id})"
        if collection_id not in new_prints:
            changes.texts.append(f"{label} is no longer in the catalog")
        elif new_prints[collection_id] != fingerprint:
            changes.texts.append(f"{label} changed its name or purpose")
    return changes


def reevaluate(ticket: ReviewTicket) -> Changes:
    """Evaluate the ticket's request again, as its actor, and compare with its answer."""
    request = ticket.request
    scope = Scope(ticket.workspace_id, ticket.actor_id)
    if ticket.kind == ReviewTicket.RESOLUTION:
        resolution = evaluate_resolution(
            scope,
            query_text=request["query"],
            collection_id=request.get("collection_id"),
            context=list(request.get("context_record_ids") or []),
        )
        return resolution_changes(ticket.answer, resolution)
    discovery = evaluate_discovery(
        ticket.workspace_id, name_text=request["name"], purpose_text=request["purpose"]
    )
    return discovery_changes(ticket.answer, discovery)


def a_few(texts: list[str]) -> str:
    """The first MAX_NAMED_CHANGES of `texts`, and how many more there are."""
    more = len(texts) - MAX_NAMED_CHANGES
    return "; ".join(texts[:MAX_NAMED_CHANGES]) + (f"; and {more} more" if more > 0 else "")


def ensure_fresh(
    tickets: list[ReviewTicket],
    current: dict[str, int],
    *,
    baseline: dict[str, int] | None = None,
    check_expiry_too: bool = True,
) -> None:
    """Refuse expired reviews and reviews whose answer changed.

    current: the counter values now (locked, when committing). baseline: values at which the
    tickets were last known valid (a prepared action's), defaulting to each ticket's own.
    """
    for ticket in tickets:
        if check_expiry_too and ticket.expires_at <= timezone.now():
            raise AnchorError(
                STALE_REVIEW,
                f"Review {ticket.pk} expired at {ticket.expires_at.isoformat()} (reviews last "
                "15 minutes). Run the review again and reconsider its answer.",
                review_id=ticket.pk,
            )
        expected = {key: (baseline or {}).get(key, value) for key, value in ticket.counters.items()}
        moved = moved_counters(expected, current)
        if not moved:
            continue  # the fast path: nothing the answer depends on was written
        if names_since_leave_standing(ticket, expected, current):
            continue  # the next: only names were written, and none of them can matter
        if changes := reevaluate(ticket):
            raise AnchorError(
                STALE_REVIEW,
                f"Review {ticket.pk} is stale: its answer changed since it was made "
                f"({a_few(changes.texts)}). Run the review again and reconsider its answer "
                "before preparing the write.",
                review_id=ticket.pk,
                changed=moved,
                changes=changes.texts,
                new_candidates=changes.new,
            )


def check_fresh(tickets: list[ReviewTicket]) -> dict[str, int]:
    """Outside a write: the counters now, at which every ticket is known to be still valid.

    The counters are read before any re-evaluation reads data, so the values returned never
    describe newer data than was checked (a race leaves them behind, which only costs a later
    re-evaluation).
    """
    current = _counters_now(tickets)
    ensure_fresh(tickets, current)
    return current


def _counters_now(tickets: list[ReviewTicket]) -> dict[str, int]:
    if not tickets:
        return {}
    keys = {key for ticket in tickets for key in ticket.counters}
    return counter_values(tickets[0].workspace_id, keys)  # load_tickets: one workspace


def warm(tickets: list[ReviewTicket], baseline: dict[str, int]) -> None:
    """Before a commit takes its locks: re-evaluate the reviews whose counters moved.

    The answer is not trusted (the commit re-evaluates under the locks); the point is that a
    scope whose names changed is reloaded into the name cache now, outside the write
    transaction, so the commit's own re-evaluation finds it loaded instead of rebuilding a
    large scope while holding the write lock.
    """
    with contextlib.suppress(AnchorError):  # the commit's own check reports it
        ensure_fresh(tickets, _counters_now(tickets), baseline=baseline, check_expiry_too=False)
