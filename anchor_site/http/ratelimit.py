"""Per-token and per-address rate limits for team mode's HTTP endpoints, answered with 429.

A request that carries a bearer credential counts against that credential (keyed by its
digest, so no database read is needed to decide); one without counts against the client's
address, and so does every request whose credential was refused (401), so cycling through
made-up tokens is bounded by the address's limit. Counting happens before the view, so a
refused request costs no database work.

Counters are fixed windows in the "ratelimit" cache. Its default (local memory) counts per
worker process; point CACHES["ratelimit"] at a shared cache to count across processes. The
stdio server never passes through here.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse

RATE_LIMITED_PREFIXES = ("/mcp", "/oauth/")
CACHE_ALIAS = "ratelimit"


def client_address(request: HttpRequest) -> str:
    if settings.ANCHOR_BEHIND_TLS_PROXY:
        # The proxy appends the address it saw; anything before it came from the client.
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def credential_key(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if not header:
        return None
    return "token:" + hashlib.sha256(header.encode("utf-8", "replace")).hexdigest()[:32]


class Window:
    """A fixed window of `limit` requests per `seconds` for one key."""

    def __init__(self, key: str, rate: tuple[int, int], now: float) -> None:
        self.limit, self.seconds = rate
        index = int(now // self.seconds)
        self.cache_key = f"anchor-rl:{key}:{index}"
        self.retry_after = max(1, math.ceil((index + 1) * self.seconds - now))

    def count(self) -> int:
        return int(caches[CACHE_ALIAS].get(self.cache_key, 0))

    def charge(self) -> int:
        cache = caches[CACHE_ALIAS]
        cache.add(self.cache_key, 0, timeout=self.seconds + 1)
        try:
            return int(cache.incr(self.cache_key))
        except ValueError:  # expired between add and incr: this is the window's first request
            cache.set(self.cache_key, 1, timeout=self.seconds + 1)
            return 1


def too_many(window: Window, whose: str) -> JsonResponse:
    response = JsonResponse(
        {
            "detail": f"Too many requests for this {whose}: the limit is {window.limit} per "
            f"{window.seconds} s. Retry after {window.retry_after} s."
        },
        status=429,
    )
    response["Retry-After"] = str(window.retry_after)
    return response


class RateLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(RATE_LIMITED_PREFIXES):
            return self.get_response(request)
        now = time.time()
        token_rate = settings.ANCHOR_HTTP_RATE_LIMIT
        address_rate = settings.ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS
        address = (
            Window(f"addr:{client_address(request)}", address_rate, now) if (address_rate) else None
        )
        credential = credential_key(request)
        if credential is None:
            if address is not None and address.charge() > address.limit:
                return too_many(address, "address")
            return self.get_response(request)
        # An address that keeps presenting refused credentials is stopped before the lookup.
        if address is not None and address.count() >= address.limit:
            return too_many(address, "address")
        if token_rate:
            window = Window(credential, token_rate, now)
            if window.charge() > window.limit:
                return too_many(window, "token")
        response = self.get_response(request)
        if response.status_code == 401 and address is not None:
            address.charge()
        return response
