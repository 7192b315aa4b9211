"""Who may work: the active token a request presents, and the user a command names.

Tokens look like ``anchor_<prefix>_<secret>``: the public prefix finds the row, and the digest
of the whole token is compared in constant time. Writes are records.services'."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from django.contrib.auth import get_user_model

from records.errors import invalid
from records.models.membership import AccessToken

TOKEN_PATTERN = re.compile(r"^anchor_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$")


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def access_token_find(raw: str) -> AccessToken | None:
    """The active token whose secret is raw, with its user; None for anything else."""
    match = TOKEN_PATTERN.match(raw or "")
    if match is None:
        return None
    token = (
        AccessToken.objects.select_related("user")
        .filter(prefix=match.group(1), revoked_at__isnull=True)
        .first()
    )
    if token is None:
        # Still hash, so a wrong prefix costs the same as a wrong secret.
        hmac.compare_digest(token_digest(raw), "0" * 64)
        return None
    if hmac.compare_digest(token_digest(raw), token.key_hash) and token.user.is_active:
        return token
    return None


def user_for_username(username: str) -> Any:
    """The user named username, or an AnchorError saying how to create one."""
    User = get_user_model()
    try:
        return User.objects.get(**{User.USERNAME_FIELD: username})
    except User.DoesNotExist:
        raise invalid(
            "user",
            f"there is no user {username!r}; create it in the admin, with createsuperuser, or "
            "with `anchor_member add --create-user`.",
        ) from None
