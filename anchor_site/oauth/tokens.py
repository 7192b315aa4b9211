"""What /mcp accepts as an OAuth access token: django-oauth-toolkit's own check, then ours.

Besides the toolkit's digest, expiry, scope and resource checks, the token must name a resource
(so a registration token, which has no user, never reaches the tools) and its user must be
active. Deactivating a person ends every OAuth grant they hold (`revoke_all_of`).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Grant
from oauth2_provider.models import RefreshToken as OAuthRefreshToken
from oauth2_provider.oauth2_backends import get_oauthlib_core

from anchor_site.oauth.resource import MCP_SCOPE, mcp_resource


def oauth_token_for(request: Any) -> OAuthAccessToken | None:
    """The valid OAuth token the Django request carries for /mcp, or None."""
    valid, checked = get_oauthlib_core().verify_request(request, scopes=[MCP_SCOPE])
    if not valid or checked is None:
        return None
    token = checked.access_token
    if token.user is None or not token.user.is_active:
        return None
    if mcp_resource(request) not in (token.resource or []):
        return None
    return token


def revoke_all_of(user: Any, **client: Any) -> bool:
    """End every code, access and refresh token `user` holds (for one `application=` only when
    given), refresh families whole; whether any token ended. The clients must ask again."""
    now = timezone.now()
    mine = Q(user=user, **client)
    with transaction.atomic():
        refreshes = OAuthRefreshToken.objects.filter(mine, revoked__isnull=True).update(
            revoked=now, updated=now
        )
        tokens, _ = OAuthAccessToken.objects.filter(mine).delete()
        Grant.objects.filter(mine).delete()
    return bool(refreshes or tokens)


def revoke_when_deactivated(sender: Any, instance: Any, **kwargs: Any) -> None:
    if not instance.is_active:
        revoke_all_of(instance)
