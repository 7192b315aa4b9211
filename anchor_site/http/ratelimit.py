"""Per-credential and per-address rate limits for team mode's HTTP endpoints, answered with 429.

A request that /mcp authenticated with a valid bearer credential counts against that credential
only (keyed by a digest of its Authorization header), so nobody who lacks it can spend its
budget. Every other request under the limited prefixes counts against the client's address: no
credential, a malformed Authorization header, a refused token, anything sent to /oauth/ (which
takes no bearer here), and a request refused before its credential was even checked.

Which budget pays is decided without a database read wherever that can be known: a request
with no usable credential, and a credential this process saw refused within the last minute,
are gated by the address before anything else runs. A credential not seen lately goes through
the view (which refuses a bad one after one indexed lookup, having written nothing) and is
charged by the outcome; this is what keeps a victim's valid token working while someone floods
bad tokens from the same address. The view tells us a credential was accepted through
`credential_accepted`.

The address is REMOTE_ADDR, which the server sets: uvicorn rewrites it from X-Forwarded-For
only when ANCHOR_BEHIND_TLS_PROXY is on, and only for connections from FORWARDED_ALLOW_IPS
(anchor_site/http/worker.py). IPv6 clients are counted per /64, the block one host is given.

Counters are fixed windows in the "ratelimit" cache. Its default (local memory) counts per
worker process; point CACHES["ratelimit"] at a shared cache to count across processes. The
stdio server never passes through here.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse

RATE_LIMITED_PREFIXES = ("/mcp", "/oauth/")
# The one endpoint that authenticates with a bearer credential (anchor_site.http.views).
CREDENTIAL_PATH = "/mcp"
CACHE_ALIAS = "ratelimit"
ACCEPTED_ATTRIBUTE = "anchor_credential_accepted"
# Far longer than any access token's secret; a longer header cannot be one.
MAX_CREDENTIAL_LENGTH = 4096
IPV6_CLIENT_PREFIX = 64


def client_address(request: HttpRequest) -> str:
    """The budget key of the client's address: itself for IPv4, its /64 for IPv6."""
    return address_key(request.META.get("REMOTE_ADDR", ""))


def address_key(raw: str) -> str:
    """client_address for a REMOTE_ADDR value."""
    raw = raw or "unknown"
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


class CredentialVerdicts:
    """Which credential keys this process lately saw accepted or refused, bounded and expiring.

    Kept apart from the counters so a flood of made-up tokens, each remembered here, can never
    push an address's counter out of the cache. Only a shortcut: a key forgotten is looked up
    by the view again, so the answer never depends on what is remembered.
    """

    ACCEPTED_FOR_S = 300.0
    REFUSED_FOR_S = 60.0

    def __init__(self, max_entries: int = 10_000) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[bool, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, now: float) -> bool | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            accepted, until = entry
            if until <= now:
                del self._entries[key]
                return None
            return accepted

    def remember(self, key: str, accepted: bool, now: float) -> None:
        until = now + (self.ACCEPTED_FOR_S if accepted else self.REFUSED_FOR_S)
        with self._lock:
            self._entries[key] = (accepted, until)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


VERDICTS = CredentialVerdicts()


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
        address_rate = settings.ANCHOR_HTTP_RATE_LIMIT_ANONYMOUS
        address = (
            Window(f"addr:{client_address(request)}", address_rate, now) if address_rate else None
        )
        credential = credential_key(request) if request.path == CREDENTIAL_PATH else None
        verdict = VERDICTS.get(credential, now) if credential else None
        if credential is None or verdict is False:
            # Nothing a valid credential could have sent: the address pays up front, and an
            # address over its limit is stopped before any database work.
            if address is not None and address.over():
                return too_many(address, "address")
            response = self.get_response(request)
            if credential is not None and was_accepted(request):
                VERDICTS.remember(credential, True, now)  # valid after all (e.g. just issued)
            return response
        return self._with_credential(request, credential, verdict, address, now)

    def _with_credential(
        self,
        request: HttpRequest,
        credential: str,
        verdict: bool | None,
        address: Window | None,
        now: float,
    ) -> HttpResponse:
        token_rate = settings.ANCHOR_HTTP_RATE_LIMIT
        token = Window(credential, token_rate, now) if token_rate else None
        if token is not None:
            # A credential known valid is charged before it runs; one not seen lately is only
            # checked here and charged below, once the view has said whether it is valid.
            spent = token.charge() if verdict else token.count() + 1
            if spent > token.limit:
                return too_many(token, "token")
        response = self.get_response(request)
        if was_accepted(request):
            VERDICTS.remember(credential, True, now)
            if token is not None and not verdict:
                token.charge()
            return response
        if response.status_code == 401:
            VERDICTS.remember(credential, False, now)
        # Not authenticated by it (refused, or refused before it was checked): the address pays.
        if address is not None and address.over():
            return too_many(address, "address")
        return response
