"""What an audit event changed, as a short list of paths with old and new values (record
context and the change feed; the snapshots stay in get_record_history). The version is left out:
it moves on every change and says nothing of its own.
"""

from __future__ import annotations

from typing import Any

from records.validation import canonical_json

# A changed value longer than this (as canonical JSON) is cut; the full value is in the history.
VALUE_CHARS = 200
UNCHANGING_KEYS = frozenset({"version"})
_MISSING = object()


def changed_paths(before: Any, after: Any) -> list[dict[str, Any]]:
    """Every leaf that differs between two snapshots: {"path", "old", "new"}, in key order;
    objects compared key by key, anything else whole; a key that appears or disappears says
    "added" or "removed"."""
    changes: list[dict[str, Any]] = []
    _walk([], before, after, changes)
    return changes


def _walk(path: list[str], before: Any, after: Any, changes: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            if not path and key in UNCHANGING_KEYS:
                continue
            _walk([*path, key], before.get(key, _MISSING), after.get(key, _MISSING), changes)
        return
    if before == after:
        return
    change: dict[str, Any] = {"path": path}
    if before is _MISSING:
        change["added"] = True
    if after is _MISSING:
        change["removed"] = True
    change["old"] = _short(None if before is _MISSING else before, change)
    change["new"] = _short(None if after is _MISSING else after, change)
    changes.append(change)


def _short(value: Any, change: dict[str, Any]) -> Any:
    text = canonical_json(value)
    if len(text) <= VALUE_CHARS:
        return value
    change["cut"] = True
    return value[:VALUE_CHARS] + "…" if isinstance(value, str) else text[:VALUE_CHARS] + "…"
