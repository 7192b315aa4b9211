"""Dynamic client registration (RFC 7591), with plain-http callbacks kept to loopback.

Registration is open, as MCP clients expect; django-oauth-toolkit does the rest. Its scheme
list cannot say "http, but only to this machine", which is what native clients need
(RFC 8252 §7.3) and all an open registration should allow: an http callback elsewhere would
carry the authorization code across the network in the clear.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, JsonResponse
from oauth2_provider.views import DynamicClientRegistrationView

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _non_loopback_http(body: bytes) -> str | None:
    try:
        metadata = json.loads(body)
    except ValueError:
        return None  # the toolkit answers malformed JSON itself
    uris = metadata.get("redirect_uris") if isinstance(metadata, dict) else None
    for uri in uris if isinstance(uris, list) else []:
        if isinstance(uri, str):
            parts = urlsplit(uri)
            if parts.scheme.lower() == "http" and (parts.hostname or "") not in LOOPBACK_HOSTS:
                return uri
    return None


class RegistrationView(DynamicClientRegistrationView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        refused = _non_loopback_http(request.body)
        if refused is not None:
            return JsonResponse(
                {
                    "error": "invalid_redirect_uri",
                    "error_description": f"{refused} is plain http to another machine; use "
                    "https, or http only to 127.0.0.1, localhost or [::1].",
                },
                status=400,
            )
        return super().post(request, *args, **kwargs)
