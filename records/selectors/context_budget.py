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
    fitted = copy.deepcopy(context)
    cut = _Cuts()
    # (step, repeat): a repeated step drops one item a time, until the reply fits.
    steps: list[tuple[Callable[[], bool], bool]] = [
        (partial(_cut_event_texts, fitted, cut, EVENT_TEXT_CHARS), False),
        (partial(_cut_link_titles, fitted, cut), False),
        (partial(_cut_event_texts, fitted, cut, EVENT_TEXT_CHARS // 2), False),
        (partial(_drop_event, fitted, cut, history_bound_to), True),
        *[(partial(_cut_data, fitted, cut, limit), False) for limit in DATA_STRING_STEPS],
        (partial(_cut_aliases, fitted, cut), False),
        (partial(_drop_link, fitted, cut), True),
        (partial(_drop_data_key, fitted, cut), True),
        (partial(_drop_alias, fitted, cut), True),
    ]
    for step, repeat in steps:
        while True:
            changed = step()
            fitted["trimmed"] = cut.marker()
            if size(fitted) <= budget:
                return fitted
            if not (repeat and changed):
                break
    return fitted


def size(value: Any) -> int:
    """Characters of the compact JSON text the client reads (as workflow.mcp.calls writes it)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


class _Cuts:
    def __init__(self) -> None:
        self.parts: set[str] = set()
        self.paths: list[str] = []

    def marker(self) -> dict[str, Any]:
        marker: dict[str, Any] = {"note": NOTE}
        for part in ("record", "events", "links"):
            if part in self.parts:
                marker[part] = {"read_whole": READ_WHOLE[part]}
        if self.paths:
            marker["record"]["data_paths"] = self.paths[:MAX_LISTED_PATHS]
            if len(self.paths) > MAX_LISTED_PATHS:
                marker["record"]["more_data_paths"] = len(self.paths) - MAX_LISTED_PATHS
        return marker


def _clip(value: Any, limit: int) -> tuple[Any, bool]:
    """A string past limit cut with "…"; any other value past it as its cut JSON text."""
    if isinstance(value, str):
        return (value[: limit - 1] + "…", True) if len(value) > limit else (value, False)
    if isinstance(value, dict | list) and size(value) > limit:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[: limit - 1] + "…", True
    return value, False


def _cut_event_texts(context: dict[str, Any], cut: _Cuts, limit: int) -> bool:
    for event in context.get("events") or []:
        for key in ("decision_reason", "agent_reported_clarification", "actor_id"):
            if key in event:
                event[key], was_cut = _clip(event[key], limit)
                if was_cut:
                    cut.parts.add("events")
        for change in event.get("changes", []):
            for key in ("old", "new"):
                change[key], was_cut = _clip(change[key], limit)
                if was_cut:
                    change["cut"] = True
                    cut.parts.add("events")
    return True


def _drop_event(context: dict[str, Any], cut: _Cuts, bound_to: str) -> bool:
    events = context.get("events")
    if not events:
        return False
    events.pop()
    cut.parts.add("events")
    context["events_truncated"] = True
    # Older events go on where the shown ones stop; with none shown, from the newest.
    last = events[-1] if events else None
    context["history_next_cursor"] = (
        encode_cursor(bound_to, [last["created_at"], last["event_id"]]) if last else None
    )
    return True


def _cut_link_titles(context: dict[str, Any], cut: _Cuts) -> bool:
    for _, links in _links(context):
        for link in links:
            link["title"], was_cut = _clip(link["title"], LINK_TITLE_CHARS)
            if was_cut:
                cut.parts.add("links")
    return True


def _drop_link(context: dict[str, Any], cut: _Cuts) -> bool:
    # The longer direction gives up its last link first, so both keep some.
    directions = _links(context)
    if not directions:
        return False
    direction, links = max(directions, key=lambda pair: len(pair[1]))
    links.pop()
    context["links"][f"{direction}_truncated"] = True
    cut.parts.add("links")
    return True


def _links(context: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    links = context["links"]
    return [(d, links[d]) for d in ("outgoing", "incoming") if links.get(d)]


def _cut_data(context: dict[str, Any], cut: _Cuts, limit: int) -> bool:
    record = context["record"]
    record["data"] = _cut_strings(record["data"], limit, "", cut)
    return True


def _cut_strings(value: Any, limit: int, path: str, cut: _Cuts) -> Any:
    if isinstance(value, dict):
        return {
            key: _cut_strings(item, limit, f"{path}.{key}" if path else key, cut)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_cut_strings(item, limit, f"{path}[{i}]", cut) for i, item in enumerate(value)]
    clipped, was_cut = _clip(value, limit) if isinstance(value, str) else (value, False)
    if was_cut:
        cut.parts.add("record")
        if path not in cut.paths:
            cut.paths.append(path)
    return clipped


def _cut_aliases(context: dict[str, Any], cut: _Cuts) -> bool:
    record = context["record"]
    clipped = [_clip(alias, ALIAS_CHARS) for alias in record["aliases"]]
    record["aliases"] = [alias for alias, _ in clipped]
    if any(was_cut for _, was_cut in clipped):
        cut.parts.add("record")
    return True


def _drop_data_key(context: dict[str, Any], cut: _Cuts) -> bool:
    data = context["record"]["data"]
    if not isinstance(data, dict) or not data:
        return False
    key = next(reversed(data))
    del data[key]
    cut.parts.add("record")
    cut.paths.append(f"{key} (left out)")
    return True


def _drop_alias(context: dict[str, Any], cut: _Cuts) -> bool:
    aliases = context["record"]["aliases"]
    if not aliases:
        return False
    aliases.pop()
    context["record"]["aliases_left_out"] = True
    cut.parts.add("record")
    return True
