"""OAuth access in the admin: the clients people connected, and the tokens they hold.

django-oauth-toolkit registers admins of its own, unscoped; they are replaced here by the same
classes made workspace-scoped: a staff member sees their own grants and tokens only (a token
acts as its user), a superuser sees everyone's. Revoking a token revokes its whole refresh
family, so the client can neither call /mcp nor mint a new token; /mcp checks every request,
so the stop is immediate.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from oauth2_provider import admin as toolkit_admin
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from records.admin.scoping import WorkspaceScopedAdmin

Application = get_application_model()
OAuthAccessToken = get_access_token_model()
OAuthRefreshToken = get_refresh_token_model()
Grant = get_grant_model()
IDToken = get_id_token_model()

# Digests and secrets are never a lookup in the URL, even for their owner.
OAUTH_SECRET_FIELDS = frozenset({"token", "token_checksum", "client_secret", "code"})

for model in (Application, OAuthAccessToken, OAuthRefreshToken, Grant, IDToken):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


class OAuthScopedAdmin(WorkspaceScopedAdmin):
    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if OAUTH_SECRET_FIELDS.intersection(lookup.split("__")):
            return False
        return super().lookup_allowed(lookup, value, request)


def revoke_families(refresh_tokens: QuerySet[Any]) -> None:
    for family in set(refresh_tokens.values_list("token_family", flat=True)):
        OAuthRefreshToken.revoke_family(family)


@admin.register(Application)
class ApplicationAdmin(OAuthScopedAdmin, toolkit_admin.ApplicationAdmin):
    # Clients registered dynamically have no owner: superusers only see those.
    owner_path = "user"


@admin.register(OAuthAccessToken)
class AccessTokenAdmin(OAuthScopedAdmin, toolkit_admin.AccessTokenAdmin):
    owner_path = "user"
    actions = ["revoke_tokens"]

    @admin.action(description="Revoke selected tokens (and their refresh tokens)")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        count = queryset.count()
        revoke_families(OAuthRefreshToken.objects.filter(access_token__in=queryset))
        queryset.delete()
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


@admin.register(OAuthRefreshToken)
class RefreshTokenAdmin(OAuthScopedAdmin, toolkit_admin.RefreshTokenAdmin):
    owner_path = "user"
    actions = ["revoke_tokens"]

    @admin.action(description="Revoke selected refresh tokens (and their access tokens)")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        count = queryset.count()
        revoke_families(queryset)
        self.message_user(request, f"Revoked {count} refresh token(s).", messages.SUCCESS)


@admin.register(Grant)
class GrantAdmin(OAuthScopedAdmin, toolkit_admin.GrantAdmin):
    owner_path = "user"


@admin.register(IDToken)
class IDTokenAdmin(OAuthScopedAdmin, toolkit_admin.IDTokenAdmin):
    # OpenID Connect is off; kept visible to superusers so nothing is hidden from them.
    superusers_only = True
