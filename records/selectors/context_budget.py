"""A record's context kept under REPLY_CHARS, whatever its values hold.

When it does not fit, it is cut in the order a reader loses least, each step only as far as
needed: event texts, link titles, the oldest events, long data strings, then whole links, data
keys and aliases. "trimmed" says what was cut and where to read it whole; a cut string ends in
"…" and must never be written back."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from records.selectors.cursors import encode_cursor
from records.selectors.serialize import clip

REPLY_CHARS = 8_000
# The envelope around a result ({"ok":true,"result":...}: 21 characters) and a margin.
ENVELOPE_CHARS = 40
EVENT_TEXT_CHARS = 80
LINK_TITLE_CHARS = 60
DATA_STRING_STEPS = (1_000, 300, 100)
ALIAS_CHARS = 60
MAX_LISTED_PATHS = 10
READ_WHOLE = {
    "record": "get_record_context with whole=true",
    "events": "get_record_history (history_next_cursor for older events)",
    "links": "search_records with linked_to",
}
NOTE = (
    f"Cut to stay under {REPLY_CHARS:,} characters: a cut string ends in …; never write one "
    "back. Read the parts named here whole with the tool each names."
)


def within_budget(context: dict[str, Any], history_bound_to: str) -> dict[str, Any]:
    """The context as it is if it fits, else a cut copy that does, with its "trimmed" marker."""
    budget = REPLY_CHARS - ENVELOPE_CHARS
    if size(context) <= budget:
        return context
    cut = _Cut(copy.deepcopy(context), history_bound_to)
    # A step that drops one item a time says whether it dropped one, and is repeated until the
    # reply fits; the others run once.
    steps: list[Callable[[], bool | None]] = [
        partial(cut.event_texts, EVENT_TEXT_CHARS),
        cut.link_titles,
        partial(cut.event_texts, EVENT_TEXT_CHARS // 2),
        cut.drop_event,
        *[partial(cut.data_strings, limit) for limit in DATA_STRING_STEPS],
        cut.aliases,
        cut.drop_link,
        cut.drop_data_key,
        cut.drop_alias,
    ]
    for step in steps:
        while True:
            again = step()
            cut.context["trimmed"] = cut.marker()
            if size(cut.context) <= budget:
                return cut.context
            if not again:
                break
    return cut.context


def size(value: Any) -> int:
    """Characters of the compact JSON text the client reads (as workflow.mcp.calls writes it)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _clip(value: Any, limit: int) -> tuple[Any, bool]:
    """A string past limit cut with "…"; any other value past it as its cut JSON text."""
    if isinstance(value, dict | list) and size(value) > limit:
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    clipped = clip(value, limit)
    return clipped, clipped != value


class _Cut:
    """A context being cut: the parts cut so far and the data paths cut in the record."""

    def __init__(self, context: dict[str, Any], history_bound_to: str) -> None:
        self.context = context
        self.record: dict[str, Any] = context["record"]
        self.history_bound_to = history_bound_to
        self.parts: set[str] = set()
        self.paths: list[str] = []

    def marker(self) -> dict[str, Any]:
        marker: dict[str, Any] = {"note": NOTE}
        marker |= {
            part: {"read_whole": how} for part, how in READ_WHOLE.items() if part in self.parts
        }
        if self.paths:
            marker["record"]["data_paths"] = self.paths[:MAX_LISTED_PATHS]
            if len(self.paths) > MAX_LISTED_PATHS:
                marker["record"]["more_data_paths"] = len(self.paths) - MAX_LISTED_PATHS
        return marker

    def event_texts(self, limit: int) -> None:
        for event in self.context.get("events") or []:
            for key in ("decision_reason", "agent_reported_clarification", "actor_id"):
                if key in event:
                    event[key], was_cut = _clip(event[key], limit)
                    if was_cut:
                        self.parts.add("events")
            for change in event.get("changes", []):
                for key in ("old", "new"):
                    change[key], was_cut = _clip(change[key], limit)
                    if was_cut:
                        change["cut"] = True
                        self.parts.add("events")

    def drop_event(self) -> bool:
        events = self.context.get("events")
        if not events:
            return False
        events.pop()
        self.parts.add("events")
        self.context["events_truncated"] = True
        # Older events go on where the shown ones stop; with none shown, from the newest.
        last = events[-1] if events else None
        self.context["history_next_cursor"] = (
            encode_cursor(self.history_bound_to, [last["created_at"], last["event_id"]])
            if last
            else None
        )
        return True

    def link_titles(self) -> None:
        for _, links in self._links():
            for link in links:
                link["title"], was_cut = _clip(link["title"], LINK_TITLE_CHARS)
                if was_cut:
                    self.parts.add("links")

    def drop_link(self) -> bool:
        # The longer direction gives up its last link first, so both keep some.
        directions = self._links()
        if not directions:
            return False
        direction, links = max(directions, key=lambda pair: len(pair[1]))
        links.pop()
        self.context["links"][f"{direction}_truncated"] = True
        self.parts.add("links")
        return True

    def _links(self) -> list[tuple[str, list[dict[str, Any]]]]:
        links = self.context["links"]
        return [(d, links[d]) for d in ("outgoing", "incoming") if links.get(d)]

    def data_strings(self, limit: int) -> None:
        self.record["data"] = self._cut_strings(self.record["data"], limit, "")

    def _cut_strings(self, value: Any, limit: int, path: str) -> Any:
        if isinstance(value, dict):
            return {
                key: self._cut_strings(item, limit, f"{path}.{key}" if path else key)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self._cut_strings(item, limit, f"{path}[{i}]") for i, item in enumerate(value)]
        clipped, was_cut = _clip(value, limit) if isinstance(value, str) else (value, False)
        if was_cut:
            self.parts.add("record")
            if path not in self.paths:
                self.paths.append(path)
        return clipped

    def aliases(self) -> None:
        clipped = [_clip(alias, ALIAS_CHARS) for alias in self.record["aliases"]]
        self.record["aliases"] = [alias for alias, _ in clipped]
        if any(was_cut for _, was_cut in clipped):
            self.parts.add("record")

    def drop_data_key(self) -> bool:
        data = self.record["data"]
        if not isinstance(data, dict) or not data:
            return False
        key = next(reversed(data))
        del data[key]
        self.parts.add("record")
        self.paths.append(f"{key} (left out)")
        return True

    def drop_alias(self) -> bool:
        if not self.record["aliases"]:
            return False
        self.record["aliases"].pop()
        self.record["aliases_left_out"] = True
        self.parts.add("record")
        return True
