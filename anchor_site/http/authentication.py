"""Bearer-token authentication for /mcp: `Authorization: Bearer anchor_<prefix>_<secret>`.

Only reads: a missing, malformed, wrong or revoked token fails before anything is written.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from records.membership_services import access_token_find
from records.models.membership import AccessToken

REALM = "anchor"
HOW_TO_GET_ONE = (
    "Create a token with `python manage.py anchor_token create <username> --name <where>` "
    "or in the admin, and send it as `Authorization: Bearer <token>`."
)


class AccessTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, AccessToken] | None:
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
        token = access_token_find(raw)
        if token is None:
            # One message for unknown, wrong, revoked and inactive-user: nothing to probe.
            raise AuthenticationFailed(
                f"The token is not valid: unknown, revoked or its user is inactive. "
                f"{HOW_TO_GET_ONE}"
            )
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        if get_authorization_header(request):
            return f'Bearer realm="{REALM}", error="invalid_token"'
        return f'Bearer realm="{REALM}"'
