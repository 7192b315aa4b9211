"""CORS for browser-based MCP clients, through django-cors-headers.

Two rules. The OAuth metadata documents are public (anyone can fetch them; they carry nothing
per person), so any origin may read them and have their preflights answered, as the toolkit's
own "Access-Control-Allow-Origin: *" on them already says. Registration, token, revocation and
/mcp are for the origins in ANCHOR_HTTP_ALLOWED_ORIGINS alone (CORS_URLS_REGEX in settings).

The library answers every preflight on a CORS path itself, even one from an origin it will not
allow (an empty 200). Here such a preflight goes on to the view instead, so an unlisted origin
meets exactly the server it would meet without CORS (OPTIONS /mcp is 403 for it, 405 without an
Origin), and with no origin listed CORS is off everywhere but the public documents.
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


# Connected when this module loads, which the middleware setting makes happen before the first
# request; the library's documented hook for a per-request decision.
@receiver(check_request_enabled, dispatch_uid="anchor-public-oauth-documents")
def public_documents_for_any_origin(sender: Any, request: HttpRequest, **kwargs: Any) -> bool:
    return is_public_document(request)


class ListedOriginsCorsMiddleware(CorsMiddleware):
    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        preflight = super().check_preflight(request)
        if preflight is None or is_public_document(request) or self.origin_is_listed(request):
            return preflight
        return None

    def origin_is_listed(self, request: HttpRequest) -> bool:
        origin = request.headers.get("origin", "")
        if not origin:
            return False
        try:
            url = urlsplit(origin)
        except ValueError:
            return False
        return self.origin_found_in_white_lists(origin, url)
