"""Who may reach a workspace over HTTP: memberships, and the access tokens agents present.

A token's secret is never stored: only its SHA-256 digest and a short public prefix that finds
the row and lets people tell their tokens apart. Re-exported by records.models.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class WorkspaceMembership(models.Model):
    """A user may work in this workspace. Over HTTP it is the only source of a request's scope."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="anchor_memberships"
    )
    workspace = models.ForeignKey(
        "records.Workspace", on_delete=models.CASCADE, related_name="memberships"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace_id", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace_id}"


class AccessToken(models.Model):
    """A bearer token for the MCP endpoint. Shown once at creation; revoked, never edited."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="anchor_tokens"
    )
    name = models.CharField(max_length=100, help_text="Where it is used, e.g. 'laptop'.")
    # Public part of the token ("anchor_<prefix>_<secret>"): finds the row, safe to display.
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    # SHA-256 of the whole token. The secret has 256 bits of entropy, so a plain digest is
    # enough: there is nothing to brute-force, and no salt or slow hash is needed.
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "revoked_at"], name="access_token_user")]

    def __str__(self) -> str:
        return f"{self.name} (anchor_{self.prefix}_…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
