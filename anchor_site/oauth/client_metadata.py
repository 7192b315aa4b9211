"""Client ID Metadata Documents (MCP authorization 2025-11-25, SEP-991): fetching and checking.

A client may use an https URL as its client_id; django-oauth-toolkit does the protocol and
consent is still asked. The fetch is the one request this server makes to a URL anyone chooses,
so `MetadataFetcher` is strict: every address the host resolves to must be public and the
connection goes to the address checked; one deadline, enforced by cancelling, covers the whole
exchange, and the database connection goes back first; a host that did not answer in time is
left alone for a while. Refusals are logged, never told: the server must not be a probe of
networks.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import socket
import threading
import time
from typing import Any
from urllib.parse import SplitResult, urlsplit

import anyio
import httpx
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from oauth2_provider.cimd import CIMDError, _effective_max_age
from oauth2_provider.models import Application
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import FatalClientError

from anchor_site.oauth.callbacks import CallbackRefused, check_client_metadata
from anchor_site.oauth.registration import (
    cap_refusal_text,
    over_registration_budget,
    room_for_a_new_client,
)

log = logging.getLogger(__name__)

# The toolkit's client_id column holds 255 characters.
MAX_CLIENT_ID_LENGTH = 255
PRINTABLE_URL = re.compile(r"^[\x21-\x7e]+$")
# RFC 6052's well-known prefix: the IPv4 address is the last 32 bits.
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SILENT_HOST_KEY = "anchor-cimd-silent:"


class FetchRefused(FatalClientError):
    """An OAuth error answered as is (fatal: never redirected to an unchecked callback)."""

    def __init__(self, error: str, status: int, description: str, retry_after: int) -> None:
        self.error = error
        self.status_code = status
        self.retry_after = retry_after
        super().__init__(description=description)

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def address_allowed(address: str, allow_loopback: bool) -> bool:
    """Only globally routable unicast addresses. IPv6 forms carrying IPv4 routably (mapped,
    6to4, Teredo, NAT64) are judged by it; any other IPv6 must be global, not reserved."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.teredo is not None:
            return all(part.is_global for part in ip.teredo)
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            ip = embedded
    if allow_loopback and ip.is_loopback:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and (ip.is_reserved or ip.is_site_local):
        return False
    # is_global counts multicast as global; a document is never served from a group.
    return ip.is_global and not ip.is_multicast


def checked_url(client_id: str) -> SplitResult:
    """The client_id as a URL the draft allows (§3), or CIMDError."""
    if len(client_id) > MAX_CLIENT_ID_LENGTH or not PRINTABLE_URL.match(client_id):
        raise CIMDError(f"is not a URL of at most {MAX_CLIENT_ID_LENGTH} printable characters")
    url = urlsplit(client_id)
    if url.scheme != "https" or not url.hostname:
        raise CIMDError("is not an https URL with a host")
    if url.username is not None or url.password is not None or url.fragment:
        raise CIMDError("has a user name, password or fragment")
    if not url.path or any(segment in {".", ".."} for segment in url.path.split("/")):
        raise CIMDError("needs a path without '.' or '..' segments")
    try:
        url.port  # noqa: B018 (raises for an invalid port)
    except ValueError as exc:
        raise CIMDError("has an invalid port") from exc
    return url


def checked_addresses(host: str, port: int, seconds: float) -> list[str]:
    """Every address the host resolves to, each allowed (a host with any other is refused), or
    CIMDError after `seconds` (the resolver cannot be interrupted: its thread finishes alone)."""
    found: list[Any] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP))
        except (OSError, UnicodeError) as exc:
            found.append(exc)

    thread = threading.Thread(target=lookup, name="cimd-resolve", daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if not found:
        mark_silent(f"{host}:{port}")
        raise CIMDError("took longer than the fetch deadline (resolving its host)")
    if isinstance(found[0], BaseException) or not found[0]:
        raise CIMDError(f"host {host!r} does not resolve") from found[0] or None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found[0]))
    for address in addresses:
        if not address_allowed(address, settings.ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK):
            raise CIMDError(f"host {host!r} resolves to {address}, which is not public")
    return addresses


async def download(seconds: float, url: SplitResult, address: str) -> tuple[dict[str, Any], int]:
    """GET the document from `address` (SNI, certificate and Host for the host) in `seconds`."""
    limit = oauth2_settings.CIMD_MAX_DOCUMENT_SIZE
    host = f"[{address}]" if ":" in address else address
    target = f"https://{host}:{url.port or 443}{url.path}" + (f"?{url.query}" if url.query else "")
    # Not the environment's proxies: the connection must reach the address just checked.
    # The certificate store is certifi's, or SSL_CERT_FILE when set.
    tls = httpx.create_ssl_context(trust_env=True)
    with anyio.fail_after(max(0.0, seconds)):
        async with (
            httpx.AsyncClient(
                verify=tls, timeout=None, follow_redirects=False, trust_env=False
            ) as http,
            http.stream(
                "GET",
                target,
                headers={"Host": url.netloc, "Accept": "application/json"},
                extensions={"sni_hostname": url.hostname},
            ) as response,
        ):
            if response.status_code != 200:
                raise CIMDError(
                    f"answered HTTP {response.status_code} (redirects are not followed)"
                )
            media_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if media_type != "application/json" and not (
                media_type.startswith("application/") and media_type.endswith("+json")
            ):
                raise CIMDError(f"answered {media_type or 'no Content-Type'}, not application/json")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise CIMDError(f"declares {declared} bytes; at most {limit} are read")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body.extend(chunk)
                if len(body) > limit:
                    raise CIMDError(f"is larger than {limit} bytes")
            cache_control = response.headers.get("Cache-Control", "")
    try:
        document = json.loads(bytes(body))
    except (ValueError, RecursionError) as exc:
        raise CIMDError("is not valid JSON") from exc
    if not isinstance(document, dict):
        raise CIMDError("is not a JSON object")
    return document, _effective_max_age(cache_control)


def check_document(client_id: str, document: dict[str, Any]) -> None:
    if document.get("client_id") != client_id:
        raise CIMDError("names another client_id; it must be exactly the URL it is served from")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise CIMDError(f'declares token_endpoint_auth_method {method!r}; it must be "none"')
    try:
        check_client_metadata(document)
    except CallbackRefused as refused:
        raise CIMDError(refused.description) from refused


def silent(place: str) -> bool:
    return bool(cache.get(SILENT_HOST_KEY + place))


def mark_silent(place: str) -> None:
    """Left alone for the backoff, whatever URL names it next."""
    cache.set(SILENT_HOST_KEY + place, True, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)


class MetadataFetcher:
    """CIMD_METADATA_FETCHER: (document, seconds to cache it) for a client_id URL."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            url = checked_url(client_id)
            host = f"{url.hostname}:{url.port or 443}"
            if silent(host):
                raise CIMDError(f"is on {host}, which did not answer in time lately")
            if not connection.in_atomic_block:
                connection.close()  # given back before waiting on the outside
            deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
            addresses = checked_addresses(
                url.hostname or "", url.port or 443, deadline - time.monotonic()
            )
            document, max_age = self._first_answer(url, host, addresses, deadline)
            check_document(client_id, document)
        except CIMDError as refused:
            log.warning("Client ID Metadata Document %s refused: it %s", client_id[:300], refused)
            raise
        return document, max_age

    def _first_answer(
        self, url: SplitResult, host: str, addresses: list[str], deadline: float
    ) -> tuple[dict[str, Any], int]:
        port = url.port or 443
        late = "took longer than the fetch deadline"
        failed = f"is on {host}, whose addresses did not answer in time lately"
        for address in addresses:
            place = f"[{address}]:{port}"
            if silent(place):
                continue
            if time.monotonic() >= deadline:
                failed = late
                break
            try:
                return anyio.run(download, deadline - time.monotonic(), url, address)
            except TimeoutError:
                failed = late
                mark_silent(place)
            except (httpx.HTTPError, OSError) as exc:
                failed = f"could not be fetched from {address} ({type(exc).__name__})"
        if failed is late:
            mark_silent(host)
        raise CIMDError(failed)


class FetchSlots:
    """At most CIMD_MAX_CONCURRENT_FETCHES fetches at once: the permission check takes a slot,
    the validator gives it back once the client is loaded (AnchorOAuth2Validator)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = 0
        self._held = threading.local()

    def take(self) -> bool:
        with self._lock:
            if not getattr(self._held, "slot", False):  # one slot a thread, however often asked
                limit = oauth2_settings.CIMD_MAX_CONCURRENT_FETCHES
                if limit and self._taken >= limit:
                    return False
                self._taken += 1
                self._held.slot = True
        return True

    def give_back(self) -> None:
        with self._lock:
            if getattr(self._held, "slot", False):
                self._held.slot = False
                self._taken -= 1


FETCH_SLOTS = FetchSlots()


class NewClientPermission:
    """Run before every fetch. A known client refreshes only with a free slot; a new one is
    refused with an OAuth error when none is free or its address spent its budget, and needs a
    place among the unclaimed clients."""

    def has_permission(self, request: Any, client_id: str) -> bool:
        if Application.objects.filter(client_id=client_id).exists():
            return FETCH_SLOTS.take()
        if not FETCH_SLOTS.take():
            log.warning(
                "Client ID Metadata Document %s not fetched: no fetch slot free", client_id[:300]
            )
            raise FetchRefused(
                "temporarily_unavailable",
                503,
                "The server is fetching as many client metadata documents as it allows at once; "
                "retry in a few seconds.",
                retry_after=oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS,
            )
        headers = getattr(request, "headers", None) or {}
        spent = over_registration_budget(headers.get("REMOTE_ADDR", ""))
        if spent is not None:
            raise FetchRefused("too_many_requests", 429, *spent)
        if not room_for_a_new_client():
            log.warning(
                "Client ID Metadata Document %s refused: %s", client_id[:300], cap_refusal_text()
            )
            return False
        return True
