"""The change feed: what changed in the workspace since a cursor, a time, or the actor's mark.

`list_changes(since_last_read=true, mark_read=true)` returns what others (and earlier
conversations) did since this actor last read, a run by one actor with one reason as one entry
(its `expand` cursor reads it whole), and moves the mark. Without a mark a read starts
`RECENT_DAYS` back and says so. Cursors are sealed (records.selectors.feed_positions).

On PostgreSQL transactions can commit out of ID order, so the feed leaves out events younger
than `ANCHOR_FEED_SETTLE_S`: a cursor never moves past a commit still in flight.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from records import validation as v
from records.errors import invalid
from records.selectors.arguments import timestamp
from records.selectors.changes import (
    ChangeWindow,
    change_events,
    change_page,
    count_events,
    minute,
)
from records.selectors.feed_positions import open_sealed, seal
from workflow.models import ReadMark
from workflow.scope import Scope

UNREAD_CAP = 1000
SCAN = UNREAD_CAP  # events one page reads at most, so a page covers what the digest counts
RECENT_DAYS = 7
MORE = "There is more: call again with cursor=next_cursor."
NO_START = "no read mark or other starting point yet"


def cursor_from_now(workspace_id: str, horizon: ChangeWindow | None = None) -> str:
    """The cursor that returns only what happens from now on; on PostgreSQL it stops before
    events still inside the settle window (the horizon's, or now's)."""
    horizon = horizon or ChangeWindow(settled_before=_settled_before())
    return seal(workspace_id, "after", latest_settled_id(workspace_id, horizon))


def catching_up(scope: Scope) -> dict[str, Any]:
    """The digest's part: how many changes since_last_read would return now, and the cursor
    for "from now on", both at one settle horizon (a count that included events the feed
    still holds back promised changes a read then did not return)."""
    horizon = ChangeWindow(settled_before=_settled_before())
    unread = count_events(scope.workspace_id, _from_mark(scope, horizon), UNREAD_CAP)
    return {
        "unread_changes": unread,
        "unread_changes_capped": unread >= UNREAD_CAP,
        "changes_cursor": cursor_from_now(scope.workspace_id, horizon),
    }


def _from_mark(scope: Scope, window: ChangeWindow) -> ChangeWindow:
    """After the actor's mark; with none yet, the recent window."""
    mark = (
        ReadMark.objects.filter(workspace_id=scope.workspace_id, actor_id=scope.actor_id)
        .values_list("last_event_id", flat=True)
        .first()
    )
    return replace(window, after_id=mark) if mark else _recent(window)


def _recent(window: ChangeWindow) -> ChangeWindow:
    return replace(window, since=timezone.now() - timedelta(days=RECENT_DAYS))


def list_changes(
    scope: Scope,
    *,
    cursor: str | None = None,
    since: str | None = None,
    since_last_read: bool = False,
    order: str = "oldest_first",
    collection_id: str | None = None,
    by: str | None = None,
    limit: int = 50,
    mark_read: bool = False,
) -> dict[str, Any]:
    """The tool's arguments, their types and bounds already checked against its schema."""
    given = {"cursor": cursor is not None, "since": since is not None}
    starts = [n for n, on in (given | {"since_last_read": since_last_read}).items() if on]
    if len(starts) > 1:
        raise invalid(
            starts[1],
            f"give one starting point, not {' and '.join(starts)}: a cursor already says "
            "where to resume, since_last_read starts at your mark, since at a time.",
        )
    newest_first = order == "newest_first"
    if mark_read:
        _check_markable(since_last_read, newest_first, collection_id, by)
    window = ChangeWindow(
        since=None if since is None else timestamp(since, "since"),
        collection_id=None
        if collection_id is None
        else v.entity_id(collection_id, "collection_id"),
        actor_id=None if by is None else _actor(by),
        newest_first=newest_first,
        settled_before=_settled_before(),
    )
    window, run_end = _positioned(scope, window, cursor, since_last_read)
    ws = scope.workspace_id
    events = change_events(ws, window, SCAN)
    changes, used = change_page(
        ws, events[:SCAN], limit, window.fold, lambda a, b: seal(ws, "run", a - 1, b)
    )
    shown = events[:used]
    has_more = len(events) > used
    reply: dict[str, Any] = {"changes": changes, "events": used, "has_more": has_more}
    if window.since is not None and since is None and cursor is None:
        reply["window"] = f"the last {RECENT_DAYS} days, from {minute(window.since)}: {NO_START}"
    reply["next_cursor"] = _next_cursor(ws, window, shown, has_more, run_end)
    if has_more:
        reply["more"] = MORE
    if mark_read:
        # next_cursor already says where the next read starts; the mark's news is the count.
        reply["read_mark"] = {"unread_after": _move_mark(scope, window, shown)}
    return reply


def _check_markable(since_last_read: bool, newest_first: bool, collection_id: Any, by: Any) -> None:
    """The mark says "read up to here": only a complete, oldest-first read from it may move it."""
    if not since_last_read:
        problem = "needs since_last_read=true: the page must start at your mark, or changes in "
        raise invalid("mark_read", problem + "between would be marked read unseen.")
    if newest_first:
        problem = "works with order oldest_first only: a newest-first page would mark older "
        raise invalid("mark_read", problem + "unread changes as read.")
    if collection_id is not None or by is not None:
        problem = "cannot be combined with collection_id or by: changes the filter hides would "
        raise invalid("mark_read", problem + "be marked read. Read unfiltered to mark.")


def _actor(value: str) -> str:
    if not value.strip() or len(value) > 300:
        raise invalid("by", "must be an actor as the changes name it, e.g. user:alice.")
    return value.strip()


def _settled_before() -> Any:
    settle = settings.ANCHOR_FEED_SETTLE_S
    if connection.vendor != "postgresql" or settle <= 0:
        return None
    return timezone.now() - timedelta(seconds=settle)


def _positioned(
    scope: Scope, window: ChangeWindow, cursor: Any, since_last_read: bool
) -> tuple[ChangeWindow, int | None]:
    """The window from its starting point, and a run's last event ID when reading one whole."""
    if since_last_read:
        return _from_mark(scope, window), None
    if cursor is None:
        return (window if window.newest_first or window.since else _recent(window)), None
    direction, event_id, end = open_sealed(scope.workspace_id, cursor)
    if direction == "after":
        return replace(window, after_id=event_id), None
    if direction == "before":
        return replace(window, before_id=event_id), None
    whole = replace(window, after_id=event_id, before_id=(end or 0) + 1, newest_first=False)
    return replace(whole, fold=False), end


def _next_cursor(
    workspace_id: str, window: ChangeWindow, events: list[Any], has_more: bool, run_end: Any
) -> str | None:
    if run_end is not None:  # the rest of the run being read whole
        return seal(workspace_id, "run", events[-1].pk, run_end) if has_more else None
    if window.newest_first:
        # Older pages: resume before the oldest shown; none when the log is exhausted.
        return seal(workspace_id, "before", events[-1].pk) if has_more else None
    # Oldest first always gives one: the page's end, or where it started for an empty page,
    # so the next call (in this conversation or another) asks for what came since.
    end = events[-1].pk if events else window.after_id
    if end is None:
        end = latest_settled_id(workspace_id, window)
    return seal(workspace_id, "after", end)


def latest_settled_id(workspace_id: str, window: ChangeWindow) -> int:
    """The newest event old enough to be read (0 for none): where an empty page leaves off."""
    probe = ChangeWindow(settled_before=window.settled_before, newest_first=True)
    newest = change_events(workspace_id, probe, 0)
    return newest[0].pk if newest else 0


def _move_mark(scope: Scope, window: ChangeWindow, events: list[Any]) -> int:
    """Move the actor's mark to the last change shown (never backwards); the changes still
    unread after it."""
    target = events[-1].pk if events else window.after_id or 0
    with transaction.atomic():
        mark, _ = ReadMark.objects.select_for_update().get_or_create(
            workspace_id=scope.workspace_id,
            actor_id=scope.actor_id,
            defaults={"last_event_id": 0, "updated_at": timezone.now()},
        )
        if target > mark.last_event_id:
            mark.last_event_id = target
            mark.updated_at = timezone.now()
            mark.save(update_fields=["last_event_id", "updated_at"])
    after = _from_mark(scope, ChangeWindow(settled_before=window.settled_before))
    return count_events(scope.workspace_id, after, UNREAD_CAP)
