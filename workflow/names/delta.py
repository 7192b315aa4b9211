"""Could the names written since a resolution was made change its answer? Asked of them alone.

The names log (records.name_log) says which records moved the resolution's names counter since
the value its review holds; every other record's names are as they were. So the answer can
differ only if one of the written records was a candidate or now matches the query under the
review's own rule (match_names on just those records' current names).

This is a filter in front of the whole re-evaluation, never a replacement for it: whenever it
cannot say (a lookup by ID or through the self mapping, a moved links counter, an incomplete
answer, a gap in the log or more writes than it reads, a counter gone back, a scope that may
have grown past the scan limit) or a written record might matter, the caller re-runs the
review whole, which alone decides whether it is stale and says how.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from records.counters import moved_counters, names_key
from records.ids import is_valid_id
from records.name_log import names_written_now
from records.names import normalize_name
from workflow.models import ReviewTicket
from workflow.names.cache import scope_record_count
from workflow.names.match import match_names
from workflow.names.view import MAX_SCOPE_RECORDS, ScopeNames
from workflow.resolution import INCOMPLETE, SELF_WORDS

# Beyond this many names written since the review, re-running it costs about what reading them
# does, and the whole re-run is the one that is always right.
MAX_WRITTEN = 500


def _read(memo: dict[Any, Any], key: tuple[Any, ...], read: Callable[[], Any]) -> Any:
    if key not in memo:
        memo[key] = read()
    return memo[key]


def names_since_leave_standing(
    ticket: ReviewTicket,
    expected: dict[str, int],
    current: dict[str, int],
    memo: dict[Any, Any] | None = None,
) -> bool:
    """True when what moved since `expected` (up to `current`) cannot change the ticket's
    answer: only its names counter moved, and no record written since was a candidate or now
    matches the query. False means "re-run it to know", not "stale". `memo`: the names log and
    the written names read once for many tickets at the same counter values."""
    if ticket.kind != ReviewTicket.RESOLUTION:
        return False
    memo = {} if memo is None else memo
    request, answer = ticket.request, ticket.answer
    query = request["query"]
    normalized = normalize_name(query)
    if normalized in SELF_WORDS or is_valid_id(query) or answer.get("status") == INCOMPLETE:
        return False  # not a lookup by name, or an answer a write could not rest on anyway
    collection_id = request.get("collection_id")
    key = names_key(collection_id)
    if moved_counters(expected, current) != [key]:
        return False  # a context record's or a candidate's links moved
    if current[key] < expected[key]:
        return False  # a counter gone back (a restored store): the log says nothing of it
    ws, was, now = ticket.workspace_id, expected[key], current[key]
    written = _read(
        memo,
        ("log", key, was, now),
        lambda: names_written_now(ws, collection_id, key, was, now, limit=MAX_WRITTEN),
    )
    if written is None:
        return False
    changed, entries = written
    if changed & {candidate["record_id"] for candidate in answer.get("candidates", [])}:
        return False
    # Each record in the scope moved its counter at least once: only a counter past the scan
    # limit can mean the scope outgrew it (the answer would now be incomplete).
    if current[key] > MAX_SCOPE_RECORDS and (
        _read(memo, ("count", key), lambda: scope_record_count(ws, collection_id))
        > MAX_SCOPE_RECORDS
    ):
        return False
    names = _read(memo, ("names", key, was, now), lambda: ScopeNames.build(0, entries))
    return not match_names(names, normalized, query)
