"""This server as an OAuth protected resource (RFC 9728): its identifier, its metadata, and
what /mcp accepts as an OAuth access token.

The resource is `https://<host>/mcp` as the client reaches it, built from the request (a TLS
proxy passing Host and X-Forwarded-Proto needs no setting); every token must be bound to it.
Besides django-oauth-toolkit's digest, expiry, scope and resource checks, the token must name a
resource (so a registration token, which has no user, never reaches the tools) and its user
must be active. Deactivating a person ends every OAuth grant they hold (`revoke_all_of`).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Grant
from oauth2_provider.models import RefreshToken as OAuthRefreshToken
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.views import OAuthProtectedResourceMetadataView

MCP_SCOPE = "mcp"


def mcp_resource(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("mcp"))


def resource_metadata_url(request: HttpRequest) -> str:
    """The path-suffixed form (RFC 9728 §3.1) for /mcp; the root form says the same."""
    return request.build_absolute_uri(
        reverse("oauth2_provider:oauth-resource-metadata-path", args=["mcp"])
    )


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """Both /.well-known/oauth-protected-resource and its /mcp-suffixed form describe /mcp:
    the server has no other protected resource. Its authorization server is the toolkit's
    default, this origin (the RFC 8414 document is at the origin's root)."""

    def get_resource(self, request: HttpRequest) -> str:
        return mcp_resource(request)

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        suffix = kwargs.get("resource_path")
        if suffix is not None and suffix.strip("/") != "mcp":
            return JsonResponse({"error": "not_found"}, status=404)
        return super().get(request, *args, **kwargs)


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
