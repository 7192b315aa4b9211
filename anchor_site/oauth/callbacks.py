"""What a client may ask for, checked alike at every door that takes client metadata
(registration, its updates, Client ID Metadata Documents), before django-oauth-toolkit sees it.

A client is kept to the one flow served: authorization code, with refresh. The toolkit stores
callbacks space-separated and cannot say "http, but only to this machine" (RFC 8252 §7.3), so
each item is checked here as exactly one absolute URI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from oauth2_provider.settings import oauth2_settings

MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI_LENGTH = 512
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# RFC 3986's unreserved and reserved characters and "%": anything else is not a URI character.
URI_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
NEVER_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob"})

# RFC 7591 §3.2.2 error codes.
INVALID_REDIRECT_URI = "invalid_redirect_uri"
INVALID_CLIENT_METADATA = "invalid_client_metadata"


@dataclass
class CallbackRefused(Exception):
    """An RFC 7591 error: `description` names the item and the fix, `error` is its code."""

    description: str
    error: str = INVALID_CLIENT_METADATA

    def __str__(self) -> str:
        return self.description


def redirect_uri_problem(uri: str, schemes: Collection[str]) -> str | None:
    """What is wrong with one callback, phrased to follow "redirect_uris[i]", or None."""
    shown = uri if len(uri) <= 80 else uri[:77] + "..."
    if len(uri) > MAX_REDIRECT_URI_LENGTH:
        return f"is {len(uri)} characters long; at most {MAX_REDIRECT_URI_LENGTH} are accepted."
    if any(character.isspace() for character in uri):
        return (
            f"({shown!r}) contains whitespace; send exactly one URI per item, each as its own "
            "array element."
        )
    if not URI_CHARACTERS.match(uri):
        return f"({shown!r}) has characters a URI cannot hold; percent-encode them (RFC 3986)."
    if "*" in uri:
        return f"({shown!r}) has a wildcard; callbacks match exactly, so list each one in full."
    if "#" in uri:
        return f"({shown!r}) has a fragment; remove everything from '#' (RFC 6749 §3.1.2)."
    scheme, _, _ = uri.partition(":")
    if not SCHEME.match(scheme) or ":" not in uri:
        return f"({shown!r}) is not an absolute URI; start it with a scheme, e.g. https://."
    scheme = scheme.lower()
    parts = urlsplit(uri)
    if "@" in parts.netloc:
        return f"({shown!r}) has a user name or password before the host; remove it."
    try:
        parts.port  # noqa: B018 (an out-of-range or non-numeric port raises here)
    except ValueError:
        return f"({shown!r}) has an invalid port; use a number from 1 to 65535."
    host = (parts.hostname or "").lower()
    if scheme in {"http", "https"}:
        if not host:
            return f"({shown!r}) names no host; use e.g. https://app.example/callback."
        if scheme == "http" and host not in LOOPBACK_HOSTS:
            return (
                f"({shown!r}) is plain http to another machine; use https, or http only to "
                "127.0.0.1, localhost or [::1]."
            )
        return None
    if scheme in NEVER_SCHEMES or scheme not in schemes:
        custom = sorted(set(schemes) - {"http", "https"})
        also = f", or one of the configured schemes: {', '.join(custom)}" if custom else ""
        return (
            f"({shown!r}) uses the scheme {scheme!r}, which this server does not accept; use "
            f"https, or http to loopback{also} (ANCHOR_OAUTH_REDIRECT_SCHEMES)."
        )
    return None


GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ["code"]


def check_client_metadata(metadata: dict[str, Any]) -> None:
    """Raise CallbackRefused (an RFC 7591 error) for metadata this server would not honour; an
    empty redirect_uris too: every client here redirects."""
    uris = metadata.get("redirect_uris", [])
    if not isinstance(uris, list):
        raise CallbackRefused(
            'redirect_uris must be an array of strings, e.g. ["http://127.0.0.1:33418/callback"].'
        )
    if not uris:
        raise CallbackRefused(
            "redirect_uris is empty; list the callback the authorization code is sent to.",
            INVALID_REDIRECT_URI,
        )
    if len(uris) > MAX_REDIRECT_URIS:
        raise CallbackRefused(
            f"redirect_uris has {len(uris)} items; at most {MAX_REDIRECT_URIS} are accepted."
        )
    allowed = {str(scheme).lower() for scheme in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES}
    for index, uri in enumerate(uris):
        if not isinstance(uri, str):
            raise CallbackRefused(
                f"redirect_uris[{index}] is not a string; each item is one callback URI."
            )
        problem = redirect_uri_problem(uri, allowed)
        if problem is not None:
            raise CallbackRefused(f"redirect_uris[{index}] {problem}", INVALID_REDIRECT_URI)
    for name, value in metadata.items():
        items = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and "\x00" in item for item in items):
            # PostgreSQL cannot store it, and no name or URI needs it.
            raise CallbackRefused(
                f"{json.dumps(name)} contains a NUL character (\\u0000); send it without one."
            )
    grant_types = metadata.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grant_types, list)
        or "authorization_code" not in grant_types
        or any(grant not in GRANT_TYPES for grant in grant_types)
    ):
        raise CallbackRefused(
            f"grant_types is {json.dumps(grant_types)}; this server issues tokens only through "
            'the authorization code, so send ["authorization_code", "refresh_token"].'
        )
    response_types = metadata.get("response_types", RESPONSE_TYPES)
    if response_types != RESPONSE_TYPES:
        raise CallbackRefused(
            f'response_types is {json.dumps(response_types)}; send ["code"], the only one '
            "this server answers."
        )
