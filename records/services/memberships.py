"""Memberships and access tokens: the only writes to them, shared by the admin and commands. A
token is stored as its digest only; the token itself is returned once, when it is made."""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django.utils.crypto import get_random_string

from records.errors import invalid
from records.models.membership import AccessToken, WorkspaceMembership
from records.selectors.memberships import token_digest
from records.services.audit_trail import workspace_ensure

logger = logging.getLogger(__name__)
# Recording every use would make each request a write; once a minute is plenty for an audit of
# which tokens are still in use.
LAST_USED_RESOLUTION = timedelta(minutes=1)
WORKSPACE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def access_token_create(*, user: Any, name: str) -> tuple[AccessToken, str]:
    """A new token for user. Returns the row and the token itself, which is never stored."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise invalid("name", "give the token a name of 1-100 characters, e.g. 'laptop'.")
    if not user.is_active:
        raise invalid("user", f"{user.get_username()!r} is inactive; activate the user first.")
    # 12 characters of 62 are 71 random bits: two tokens sharing a prefix is not a case to
    # handle (the unique constraint would refuse the second).
    prefix = get_random_string(12)  # letters and digits, drawn with secrets
    raw = f"anchor_{prefix}_{secrets.token_urlsafe(32)}"
    token = AccessToken.objects.create(
        user=user, name=name, prefix=prefix, key_hash=token_digest(raw)
    )
    return token, raw


def access_token_revoke(*, token: AccessToken) -> bool:
    """Revoke token; False when it was already revoked (revoking twice changes nothing)."""
    now = timezone.now()
    updated = AccessToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=now
    )
    if updated:
        token.revoked_at = now
    return bool(updated)


def access_tokens_revoke_when_deactivated(sender: Any, instance: Any, **kwargs: Any) -> None:
    """Saving an inactive user revokes their tokens, so reactivating them revives none."""
    if not instance.is_active:
        AccessToken.objects.filter(user=instance, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )


@contextmanager
def _transaction_without_waiting() -> Iterator[None]:
    """A transaction in which a held lock is an immediate error, not a wait: on SQLite a busy
    timeout of zero (set before the IMMEDIATE transaction begins), on PostgreSQL a short lock
    timeout for the transaction only."""
    if connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '100ms'")
            yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (configured,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 0")
    try:
        with transaction.atomic():
            yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(configured)}")


def access_token_touch(*, token: Any) -> bool:
    """Record that token was used (last_used_at, or an OAuth token's `updated`), at most once
    per LAST_USED_RESOLUTION. Never waits: under another writer's lock it skips and says so."""
    field = "last_used_at" if isinstance(token, AccessToken) else "updated"
    now = timezone.now()
    last = getattr(token, field)
    if last and now - last < LAST_USED_RESOLUTION:
        return False
    try:
        with _transaction_without_waiting():
            type(token).objects.filter(pk=token.pk).update(**{field: now})
    except DatabaseError as exc:  # busy, or read-only: the request itself is served
        logger.info("Skipped the last-used stamp of token %s: %s", token.pk, exc)
        return False
    setattr(token, field, now)
    return True


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
        workspace_ensure(workspace_id)
        return WorkspaceMembership.objects.get_or_create(user=user, workspace_id=workspace_id)


def workspace_membership_remove(*, user: Any, workspace_id: str) -> bool:
    deleted, _ = WorkspaceMembership.objects.filter(user=user, workspace_id=workspace_id).delete()
    return bool(deleted)
