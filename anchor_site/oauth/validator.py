"""django-oauth-toolkit's request validator, refusing codes and refresh tokens of inactive users.

The toolkit checks a code's or refresh token's client, expiry and PKCE verifier, but not that
the person behind it may still sign in. Deactivating a user in the admin must stop them at
once: /mcp checks every request, and these checks stop a new token being minted.
"""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


def _user_is_active(request: Any) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active)


class AnchorOAuth2Validator(OAuth2Validator):
    def validate_code(
        self, client_id: Any, code: Any, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        return super().validate_code(client_id, code, client, request, *args, **kwargs) and (
            _user_is_active(request)
        )

    def validate_refresh_token(
        self, refresh_token: Any, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        return valid and _user_is_active(request)
