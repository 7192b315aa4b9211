"""What a client may ask for, checked the same way at every door that takes client metadata.

Dynamic registration, its updates and Client ID Metadata Documents all describe a client with
RFC 7591 metadata; each passes it here before django-oauth-toolkit sees it. The callback rules
themselves are records.oauth_callbacks (the admin applies them too); the rest keeps a client to
the one flow this server serves: authorization code, with refresh, answered with a code.
"""

from __future__ import annotations

import json
from typing import Any

from records.oauth_callbacks import INVALID_CLIENT_METADATA, CallbackRefused, check_redirect_uris

GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ["code"]


def check_client_metadata(metadata: dict[str, Any]) -> None:
    """Raise CallbackRefused (an RFC 7591 error) for metadata this server would not honour."""
    check_redirect_uris(metadata.get("redirect_uris", []))
    for name, value in metadata.items():
        items = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and "\x00" in item for item in items):
            # PostgreSQL cannot store it, and no name or URI needs it.
            raise CallbackRefused(
                INVALID_CLIENT_METADATA,
                f"{json.dumps(name)} contains a NUL character (\\u0000); send it without one.",
            )
    grant_types = metadata.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grant_types, list)
        or "authorization_code" not in grant_types
        or any(grant not in GRANT_TYPES for grant in grant_types)
    ):
        raise CallbackRefused(
            INVALID_CLIENT_METADATA,
            f"grant_types is {json.dumps(grant_types)}; this server issues tokens only through "
            'the authorization code, so send ["authorization_code", "refresh_token"].',
        )
    response_types = metadata.get("response_types", RESPONSE_TYPES)
    if response_types != RESPONSE_TYPES:
        raise CallbackRefused(
            INVALID_CLIENT_METADATA,
            f'response_types is {json.dumps(response_types)}; send ["code"], the only one '
            "this server answers.",
        )
