"""Change-feed positions sealed with the workspace's own key, so a cursor reveals nothing.

Audit event IDs are numbered across workspaces: two plain cursors an hour apart would say how
much every other workspace wrote between. The seal is deterministic (a cursor that does not move
shows nothing moved) and authenticated (a synthetic IV, HMAC-SHA256 of the position, seeds the
pad and is checked on opening), so another workspace's, an altered or an old cursor is refused.
The start of the log is not sealed. A "run" cursor also holds the last event of a folded run.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from records.errors import invalid
from records.models import Workspace

PREFIX = "c1."
START = PREFIX + "start"
DIRECTIONS = ("after", "before", "run")
IV_BYTES = 12
REFUSAL = (
    "is not a change-feed cursor of this workspace: pass next_cursor or the digest's "
    "changes_cursor unchanged. Cursors from an earlier server version or another workspace "
    "are not accepted; start again with since_last_read=true or a new changes_cursor."
)


def seal(workspace_id: str, direction: str, event_id: int, end_id: int | None = None) -> str:
    if direction == "after" and event_id == 0:
        return START
    key = _key(workspace_id)
    plain = bytes([DIRECTIONS.index(direction)]) + event_id.to_bytes(8, "big")
    if end_id is not None:
        plain += end_id.to_bytes(8, "big")
    iv = _mac(key, b"iv", plain)[:IV_BYTES]
    body = iv + _xor(plain, _mac(key, b"pad", iv))
    return PREFIX + base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")


def open_sealed(workspace_id: str, cursor: object) -> tuple[str, int, int | None]:
    """(direction, event ID, a run's last event ID) of a cursor sealed for this workspace;
    refuses anything else."""
    if cursor == START:
        return "after", 0, None
    if not isinstance(cursor, str) or not cursor.startswith(PREFIX) or len(cursor) > 100:
        raise invalid("cursor", REFUSAL)
    try:
        text = cursor[len(PREFIX) :]
        body = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:  # binascii.Error is one
        raise invalid("cursor", REFUSAL) from None
    key = _key(workspace_id)
    if len(body) not in (IV_BYTES + 9, IV_BYTES + 17) or not key:
        raise invalid("cursor", REFUSAL)
    iv, hidden = body[:IV_BYTES], body[IV_BYTES:]
    plain = _xor(hidden, _mac(key, b"pad", iv))
    if not hmac.compare_digest(iv, _mac(key, b"iv", plain)[:IV_BYTES]):
        raise invalid("cursor", REFUSAL)
    end = int.from_bytes(plain[9:], "big") if len(plain) > 9 else None
    return DIRECTIONS[plain[0]], int.from_bytes(plain[1:9], "big"), end


def _key(workspace_id: str) -> bytes:
    # No row, no events: only the start, which is not sealed, is a position there.
    key = Workspace.objects.filter(pk=workspace_id).values_list("feed_key", flat=True).first()
    return (key or "").encode()


def _mac(key: bytes, label: bytes, message: bytes) -> bytes:
    return hmac.new(key, label + b"\x00" + message, hashlib.sha256).digest()


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=False))
