"""CORS for browser-based MCP clients, through django-cors-headers.

The OAuth metadata documents are public to any origin. Registration, token, revocation and /mcp
are for ANCHOR_HTTP_ALLOWED_ORIGINS alone (CORS_URLS_REGEX). The library would answer every
preflight on a CORS path itself; here an unlisted origin's goes on to the view, so it meets
exactly the server it would meet without CORS.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from corsheaders.middleware import CorsMiddleware
from corsheaders.signals import check_request_enabled
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase

PUBLIC_DOCUMENTS = re.compile(
    r"^/\.well-known/(oauth-authorization-server|oauth-protected-resource(/.*)?)$"
)


def is_public_document(request: HttpRequest) -> bool:
    return bool(PUBLIC_DOCUMENTS.match(request.path_info))


# The library's documented per-request hook, connected as the middleware setting loads this.
@receiver(check_request_enabled, dispatch_uid="anchor-public-oauth-documents")
def public_documents_for_any_origin(sender: Any, request: HttpRequest, **kwargs: Any) -> bool:
    return is_public_document(request)


class ListedOriginsCorsMiddleware(CorsMiddleware):
    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        preflight = super().check_preflight(request)
        if preflight is None or is_public_document(request):
            return preflight
        origin = request.headers.get("origin", "")
        try:
            listed = bool(origin) and self.origin_found_in_white_lists(origin, urlsplit(origin))
        except ValueError:  # not a URL at all
            listed = False
        return preflight if listed else None
