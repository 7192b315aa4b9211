"""Per-credential and per-address rate limits for team mode's HTTP endpoints, answered with 429.

A request /mcp authenticated with a valid bearer credential counts against that credential only
(keyed by a digest of its Authorization header), so nobody lacking it can spend its budget. Any
other request under the limited prefixes counts against the client's address. Without a database
read where it can be known: no usable credential, or one this process saw refused lately, is
gated by the address first; a credential not seen lately goes through the view and is charged by
the outcome, so a victim's valid token keeps working while someone floods bad tokens from the same
address. The address is REMOTE_ADDR (rewritten from X-Forwarded-For only behind the TLS proxy,
anchor_site/http/worker.py); IPv6 clients count per /64. Counters are fixed windows in the
"ratelimit" cache: per worker, unless CACHES["ratelimit"] is shared.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest, HttpResponse, JsonResponse

RATE_LIMITED_PREFIXES = ("/mcp", "/oauth/")
# The one endpoint that authenticates with a bearer credential (anchor_site.http.views).
CREDENTIAL_PATH = "/mcp"
CACHE_ALIAS = "ratelimit"
ACCEPTED_ATTRIBUTE = "anchor_credential_accepted"
# Far longer than any access token's secret; a longer header cannot be one.
MAX_CREDENTIAL_LENGTH = 4096
IPV6_CLIENT_PREFIX = 64


def address_key(remote_addr: str) -> str:
    """The budget key of a client's address (REMOTE_ADDR): itself for IPv4, its /64 for IPv6."""
    raw = remote_addr or "unknown"
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def credential_key(request: HttpRequest) -> str | None:
    """The key of a well-formed `Bearer <token>` header; None when it cannot be a credential."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    parts = header.split()
    if len(parts) != 2 or parts[0].lower() != "bearer" or len(header) > MAX_CREDENTIAL_LENGTH:
        return None
    if not parts[1].isascii():
        return None
    return "token:" + hashlib.sha256(header.encode("ascii")).hexdigest()[:32]


def credential_accepted(request: HttpRequest) -> None:
    """Called by the view once the request's credential authenticated it."""
    setattr(request, ACCEPTED_ATTRIBUTE, True)


def was_accepted(request: HttpRequest) -> bool:
    return bool(getattr(request, ACCEPTED_ATTRIBUTE, False))


# Which credentials this process lately saw accepted or refused. Apart from the counters, so a
# flood of made-up tokens can never push an address's counter out; only a shortcut (a key
# forgotten is looked up by the view again).
VERDICTS = LocMemCache("anchor-credential-verdicts", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
ACCEPTED_FOR_S, REFUSED_FOR_S = 300, 60


def remember(credential: str, accepted: bool) -> None:
    VERDICTS.set(credential, accepted, ACCEPTED_FOR_S if accepted else REFUSED_FOR_S)


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

    def over(self) -> bool:
        """Charge one request; True when that takes the window past its limit."""
        return self.charge() > self.limit


def too_many(window: Window, whose: str) -> JsonResponse:
    detail = (
        f"Too many requests for this {whose}: the limit is {window.limit} per {window.seconds} "
        f"s. Retry after {window.retry_after} s."
    )
    return JsonResponse(
        {"detail": detail}, status=429, headers={"Retry-After": str(window.retry_after)}
    )


class RateLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(RATE_LIMITED_PREFIXES):
            return self.get_response(request)
        now = time.time()
        rate = settings.ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS
        address_budget = f"addr:{address_key(request.META.get('REMOTE_ADDR', ''))}"
        address = Window(address_budget, rate, now) if rate else None
        credential = credential_key(request) if request.path == CREDENTIAL_PATH else None
        verdict = VERDICTS.get(credential) if credential else None
        if credential is None or verdict is False:
            # Nothing a valid credential could have sent: the address pays up front, and an
            # address over its limit is stopped before any database work.
            if address is not None and address.over():
                return too_many(address, "address")
            response = self.get_response(request)
            if credential is not None and was_accepted(request):
                remember(credential, True)  # valid after all (e.g. just issued)
            return response
        rate = settings.ANCHOR_HTTP_RATE_LIMIT
        token = Window(credential, rate, now) if rate else None
        if token is not None:
            # A credential known valid is charged before it runs; one not seen lately is only
            # checked here and charged below, once the view has said whether it is valid.
            spent = token.charge() if verdict else token.count() + 1
            if spent > token.limit:
                return too_many(token, "token")
        response = self.get_response(request)
        if was_accepted(request):
            remember(credential, True)
            if token is not None and not verdict:
                token.charge()
            return response
        if response.status_code == 401:
            remember(credential, False)
        # Not authenticated by it (refused, or refused before it was checked): the address pays.
        if address is not None and address.over():
            return too_many(address, "address")
        return response
