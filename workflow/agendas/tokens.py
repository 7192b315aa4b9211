"""Cursor tokens and presentation IDs. A token is a digest of one exact position (agenda,
revision, layer, item) and a random nonce stored with the revision: no server secret, valid
across restarts until the next mutation replaces the nonce, and not guessable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_DIGEST_CHARS = 24


def new_nonce() -> str:
    return secrets.token_hex(16)


def new_presentation_id() -> str:
    return f"pres-{secrets.token_hex(6)}"


def cursor_token(
    *, agenda_id: str, revision: int, layer_id: str, item_id: str | None, nonce: str
) -> str:
    material = "\x1f".join([agenda_id, str(revision), layer_id, item_id or "-", nonce])
    digest = hashlib.sha256(material.encode()).hexdigest()[:TOKEN_DIGEST_CHARS]
    return f"r{revision}.{digest}"


def token_revision(token: str) -> int | None:
    """The revision a well-formed token claims, to explain a refusal; never trusted."""
    head, _, _ = token.partition(".")
    if head.startswith("r") and head[1:].isdigit():
        return int(head[1:])
    return None


def tokens_match(given: str, current: str) -> bool:
    return hmac.compare_digest(given.encode(), current.encode())
