"""Opaque keyset cursors, bound to the workspace and the exact parameters that produced them.

Not signed: the key only says where to resume inside the caller's own workspace, which every
query filters anyway, and a signing key would differ between server processes."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from records.errors import invalid
from records.validation import canonical_json

MAX_CURSOR_LENGTH = 2000
FIX = "pass next_cursor from the previous page of the same call unchanged, or omit it to restart."


def fingerprint(kind: str, workspace_id: str, params: dict[str, Any]) -> str:
    payload = canonical_json({"kind": kind, "workspace": workspace_id, "params": params})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def encode_cursor(bound_to: str, key: list[Any]) -> str:
    raw = canonical_json({"f": bound_to, "k": key}).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: Any, bound_to: str, *, key_length: int) -> list[Any] | None:
    """The sort key to resume after, or None for the first page. Refuses foreign cursors."""
    if cursor is None:
        return None
    if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_LENGTH:
        raise invalid("cursor", f"is not a cursor returned by this server; {FIX}")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw.decode("utf-8"))
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise invalid("cursor", f"is malformed; {FIX}") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("k"), list):
        raise invalid("cursor", f"is malformed; {FIX}")
    if payload.get("f") != bound_to:
        raise invalid(
            "cursor",
            "belongs to a different call (other parameters, record, collection or workspace); "
            f"{FIX}",
        )
    key: list[Any] = payload["k"]
    if len(key) != key_length:
        raise invalid("cursor", f"is malformed; {FIX}")
    return key
