"""Checks on the HTTP request itself, before authentication and any database access (DRF errors)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import (
    APIException,
    MethodNotAllowed,
    ParseError,
    PermissionDenied,
    UnsupportedMediaType,
)

from anchor_site.http.body_limit import too_large_message


class LengthRequired(APIException):
    status_code = status.HTTP_411_LENGTH_REQUIRED
    default_detail = "Send a Content-Length header; chunked request bodies are not accepted."
    default_code = "length_required"


class PayloadTooLarge(APIException):
    """Under the production server the ASGI wrapper refuses these first, unread."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


def origin_is_allowed(request: Any) -> bool:
    """No Origin (every non-browser client), the server's own origin, or a configured one.

    A browser page on another site (or a DNS-rebinding page) sends its own Origin; refusing it
    keeps web pages from driving an agent's memory with the user's network position.
    """
    origin = request.META.get("HTTP_ORIGIN")
    if origin is None:
        return True
    origin = origin.strip().lower()
    if origin in settings.ANCHOR_HTTP_ALLOWED_ORIGINS:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return False  # includes the opaque "null" origin of sandboxed pages and files
    return bool(parts.netloc) and parts.netloc == request.get_host().lower()


def check_transport(request: Any, allowed_methods: Sequence[str]) -> None:
    """Origin, method, media type and size, in that order; raises on the first failure."""
    if not origin_is_allowed(request):
        raise PermissionDenied(
            "Requests from this Origin are refused. Browser pages may only call /mcp from the "
            "server's own origin or one listed in ANCHOR_HTTP_ALLOWED_ORIGINS."
        )
    if request.method.lower() not in allowed_methods:
        # No server-sent event stream on GET (the stock view's spins a CPU): 405, as specified.
        raise MethodNotAllowed(request.method)
    if request.method != "POST":
        return
    media_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType(
            media_type or "(none)",
            detail=f"Content-Type {media_type or '(none)'!r} is not accepted; send JSON-RPC as "
            "application/json.",
        )
    raw_length = request.META.get("CONTENT_LENGTH") or ""
    if not raw_length:
        raise LengthRequired()
    try:
        length = int(raw_length)
    except ValueError:
        raise ParseError(f"Content-Length {raw_length!r} is not a number.") from None
    limit = settings.ANCHOR_HTTP_MAX_BODY_BYTES
    if length > limit:
        raise PayloadTooLarge(too_large_message(limit, length))
