"""django-oauth-toolkit's request validator, with two refusals the toolkit leaves out.

Codes and refresh tokens of inactive users are refused, so deactivating a user stops new tokens
at once. A code used twice is refused and revokes what it bought (RFC 6749 §4.1.2): the refresh
family issued for a code is named after the code's digest, and refreshes inherit it.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from oauth2_provider.models import RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError

from anchor_site.oauth.client_metadata import FETCH_SLOTS

# Fixed for the life of the project: changing it would unlink every live family from its code.
CODE_FAMILY_NAMESPACE = uuid.UUID("3b0b7d1e-8f0c-5a7e-9d7c-4f1f3c7a2e61")


def _user_is_active(request: Any) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active)


def code_token_family(code: str) -> uuid.UUID:
    """The refresh-token family of the tokens a code bought; from the digest, never the code."""
    digest = hashlib.sha256(code.encode("utf-8")).hexdigest()
    return uuid.uuid5(CODE_FAMILY_NAMESPACE, digest)


def revoke_tokens_of_code(code: str, client: Any) -> None:
    """Revoke the refresh tokens (and their access tokens) a code bought for this client."""
    family = code_token_family(code)
    if RefreshToken.objects.filter(token_family=family, application=client).exists():
        RefreshToken.revoke_family(family)


class AnchorOAuth2Validator(OAuth2Validator):
    """The toolkit's validator with Anchor's rules. It overrides two protected methods,
    `_load_application` and `_create_refresh_token`: tests/http/test_toolkit_reliances.py
    fails if an upgrade renames either or changes its arguments."""

    def _load_application(self, client_id: Any, request: Any) -> Any:
        # Where the toolkit fetches a metadata document: the permission check's slot comes back.
        try:
            return super()._load_application(client_id, request)
        finally:
            FETCH_SLOTS.give_back()

    def validate_code(
        self, client_id: Any, code: Any, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return _user_is_active(request)
        # The toolkit deletes a code once it is exchanged, so a code not on file may be a
        # replay; if it bought tokens, they go (for a code never issued, nothing matches).
        revoke_tokens_of_code(code, client)
        return False

    def invalidate_authorization_code(
        self, client_id: Any, code: Any, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except InvalidGrantError:
            # Two exchanges of one code raced: it was used twice, so both exchanges' tokens go.
            revoke_tokens_of_code(code, request.client)
            raise

    def _create_refresh_token(
        self, request: Any, refresh_token_code: Any, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        if previous_refresh_token is None and request.grant_type == "authorization_code":
            # A new family is named after its code, so a replay of the code can find it.
            refresh_token.token_family = code_token_family(request.code)
            refresh_token.save(update_fields=["token_family"])
        return refresh_token

    def validate_refresh_token(
        self, refresh_token: Any, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        return valid and _user_is_active(request)
