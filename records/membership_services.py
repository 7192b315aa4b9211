"""Memberships and access tokens: the only writes to them, shared by the admin and commands.

Tokens look like ``anchor_<prefix>_<secret>``. The prefix (public) finds the row; the digest of
the whole token is compared in constant time, so neither a lookup nor a comparison leaks how
much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from records import services
from records.errors import STORAGE_ERROR, AnchorError, invalid
from records.models.membership import AccessToken, WorkspaceMembership

logger = logging.getLogger(__name__)
TOKEN_PATTERN = re.compile(r"^anchor_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$")
# Recording every use would make each request a write; once a minute is plenty for an audit of
# which tokens are still in use.
LAST_USED_RESOLUTION = timedelta(minutes=1)
WORKSPACE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def access_token_create(*, user: Any, name: str) -> tuple[AccessToken, str]:
    """A new token for user. Returns the row and the token itself, which is never stored."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise invalid("name", "give the token a name of 1-100 characters, e.g. 'laptop'.")
    if not user.is_active:
        raise invalid("user", f"{user.get_username()!r} is inactive; activate the user first.")
    for _ in range(5):  # a prefix collision is astronomically rare; retry rather than fail
        prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(12))
        raw = f"anchor_{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                token = AccessToken.objects.create(
                    user=user, name=name, prefix=prefix, key_hash=token_digest(raw)
                )
        except IntegrityError:
            continue
        return token, raw
    raise AnchorError(STORAGE_ERROR, "Could not allocate a unique token prefix; try again.")


def access_token_revoke(*, token: AccessToken) -> bool:
    """Revoke token; False when it was already revoked (revoking twice changes nothing)."""
    now = timezone.now()
    updated = AccessToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=now
    )
    if updated:
        token.revoked_at = now
    return bool(updated)


@contextmanager
def _sqlite_without_waiting() -> Iterator[None]:
    """On SQLite, a busy timeout of zero while inside: a held lock is an immediate error.

    Set before the transaction begins, since settings begin transactions IMMEDIATE (taking
    the lock up front); the configured timeout comes back afterwards.
    """
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (configured,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(configured)}")


def _postgres_without_waiting() -> None:
    """On PostgreSQL, a short lock timeout for the current transaction only."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '100ms'")


def access_token_touch(*, token: AccessToken) -> bool:
    """Record that token was used, at most once per LAST_USED_RESOLUTION; best effort.

    Never waits: when another writer holds the lock (SQLite's database lock, or the row on
    PostgreSQL) the stamp is skipped and a later request records it. Returns whether it wrote.
    """
    now = timezone.now()
    if token.last_used_at and now - token.last_used_at < LAST_USED_RESOLUTION:
        return False
    try:
        with _sqlite_without_waiting(), transaction.atomic():
            _postgres_without_waiting()
            AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
    except OperationalError:
        logger.info("Skipped the last-used stamp of token %s: the store is busy.", token.prefix)
        return False
    token.last_used_at = now
    return True


def access_token_find(raw: str) -> AccessToken | None:
    """The active token whose secret is raw, with its user; None for anything else. Read-only."""
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
    if not hmac.compare_digest(token_digest(raw), token.key_hash):
        return None
    if not token.user.is_active:
        return None
    return token


def workspace_membership_add(*, user: Any, workspace_id: str) -> tuple[WorkspaceMembership, bool]:
    """Let user work in workspace_id (created if new). Returns (membership, created)."""
    workspace_id = (workspace_id or "").strip()
    if not WORKSPACE_ID_PATTERN.match(workspace_id):
        raise invalid(
            "workspace",
            f"{workspace_id!r} is not a valid workspace ID; use 1-64 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit.",
        )
    with transaction.atomic():
        services.workspace_ensure(workspace_id)
        return WorkspaceMembership.objects.get_or_create(user=user, workspace_id=workspace_id)


def workspace_membership_remove(*, user: Any, workspace_id: str) -> bool:
    deleted, _ = WorkspaceMembership.objects.filter(user=user, workspace_id=workspace_id).delete()
    return bool(deleted)


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
