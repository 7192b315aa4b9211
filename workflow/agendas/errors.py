"""Refusal codes of the agenda tools, beside the store's shared vocabulary in records.errors."""

from __future__ import annotations

from typing import Any

from records.errors import AnchorError

# The cursor token is not the agenda's current one: a delayed, repeated or foreign command.
STALE_CURSOR = "STALE_CURSOR"
# A whole picture was issued and not yet acknowledged; progress waits for it.
PRESENTATION_REQUIRED = "PRESENTATION_REQUIRED"
# A child layer returned; the parent item's conclusion must be revised before moving on.
SYNTHESIS_REQUIRED = "SYNTHESIS_REQUIRED"
# The step does not fit the agenda's state (advancing an unresolved item, acting while paused).
AGENDA_ORDER = "AGENDA_ORDER"
# A record is bound to an item of another agenda that is open, or whose outcome is not synced.
RECORD_HELD = "RECORD_HELD"
# The event chain or seal is broken: nothing moves until the agenda is explicitly repaired.
AGENDA_UNHEALTHY = "AGENDA_UNHEALTHY"
# A repair's expected hashes are not the agenda's current ones: it changed since inspection.
STALE_HASHES = "STALE_HASHES"


def order_error(message: str, **details: Any) -> AnchorError:
    return AnchorError(AGENDA_ORDER, message, **details)
