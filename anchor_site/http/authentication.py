"""Bearer-token authentication for /mcp: a personal access token or an OAuth access token.

`Bearer anchor_<prefix>_<secret>` is a personal token (records.AccessToken), anything else an
OAuth token (anchor_site.oauth.resource). Only reads; the 401 names the protected-resource metadata
(RFC 9728 §5.1), where an OAuth client learns where to send the person.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from anchor_site.oauth.resource import MCP_SCOPE, oauth_token_for, resource_metadata_url
from records.acting import OAUTH, TOKEN, credential_key
from records.models.membership import AccessToken
from records.selectors import access_token_find

REALM = "anchor"
PERSONAL_TOKEN_PREFIX = "anchor_"
HOW_TO_GET_ONE = (
    "Connect with OAuth (the client follows resource_metadata in WWW-Authenticate), or create a "
    "token with `python manage.py anchor_token create <username> --name <where>` or in the "
    "admin, and send it as `Authorization: Bearer <token>`."
)


class AccessTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        header = get_authorization_header(request).split()
        if not header:
            return None  # IsAuthenticated then answers 401 "credentials were not provided"
        if header[0].lower() != b"bearer" or len(header) != 2:
            raise AuthenticationFailed(
                f"The Authorization header must be 'Bearer <token>'. {HOW_TO_GET_ONE}"
            )
        try:
            raw = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed(f"The token is not valid. {HOW_TO_GET_ONE}") from None
        if raw.startswith(PERSONAL_TOKEN_PREFIX):
            token: Any = access_token_find(raw)
        else:
            # The plain Django request: DRF's would parse the body before the view could.
            token = oauth_token_for(request._request)
        if token is None:
            # One message for every reason: nothing to probe.
            raise AuthenticationFailed(
                "The token is not valid: unknown, expired, revoked, issued for another "
                f"resource, or its user is inactive. {HOW_TO_GET_ONE}"
            )
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        error = ', error="invalid_token"' if get_authorization_header(request) else ""
        return (
            f'Bearer realm="{REALM}", resource_metadata="{resource_metadata_url(request)}", '
            f'scope="{MCP_SCOPE}"{error}'
        )


def credential_of(token: Any) -> tuple[str, str]:
    """The credential an agent acts through, as the audit names it: a personal token by its
    row and name; an OAuth token by its client (a refresh replaces the token, not the client)
    and the client's name, or its client_id when it gave none."""
    if isinstance(token, AccessToken):
        return credential_key(TOKEN, token.pk), token.name
    client = token.application
    return credential_key(OAUTH, client.pk), (client.name or client.client_id)[:300]
