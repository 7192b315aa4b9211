"""Client ID Metadata Documents (MCP authorization 2025-11-25, SEP-991): fetching and checking.

A client may use an https URL as its client_id; the URL serves its metadata (RFC 7591 fields).
django-oauth-toolkit does the protocol: on first sight of such a client_id at /oauth/authorize
or /oauth/token it calls the fetcher configured in CIMD_METADATA_FETCHER, checks that the
document's client_id is the URL, and creates the public, authorization-code Application for it
(client_id = the URL); it fetches again once the cached copy is older than its max-age
(Cache-Control, clamped to CIMD_METADATA_MIN/MAX_AGE_SECONDS), and backs off a URL that failed.
Consent is still asked, as for every client no superuser registered.

Fetching the URL is the one request this server makes to the outside, to a URL anyone can
choose, so `MetadataFetcher` is strict: https only; the host is resolved and every address it
resolves to must be public (no private, loopback, link-local or otherwise special address,
including IPv4 hidden in IPv6 forms), and the connection goes to the address checked, with the
certificate verified for the host; no redirects; one deadline for the whole exchange; a size
cap, refused from Content-Length before anything is read. The document then passes the same
checks as a registration (anchor_site.oauth.callbacks), and must name a public client.
`ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK` (tests only) admits loopback addresses.

Refusals are logged as one warning each: the client only learns its client_id is unknown, as
the draft asks, so an outside party cannot use the server to probe networks.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import socket
import time
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpx
from django.conf import settings
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings

from anchor_site.oauth.callbacks import CallbackRefused, check_client_metadata
from anchor_site.oauth.unclaimed import cap_refusal_text, unclaimed_cap_reached

log = logging.getLogger(__name__)

# The toolkit's client_id column holds 255 characters.
MAX_CLIENT_ID_LENGTH = 255
PRINTABLE_URL = re.compile(r"^[\x21-\x7e]+$")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
MAX_AGE = re.compile(r"max-age\s*=\s*(\d+)", re.IGNORECASE)


def address_allowed(address: str, allow_loopback: bool) -> bool:
    """Only globally routable unicast addresses, judging IPv4 embedded in IPv6 by its IPv4."""
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
    # is_global counts multicast as global; a document is never served from a group.
    return (ip.is_global and not ip.is_multicast) or (allow_loopback and ip.is_loopback)


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


def checked_addresses(host: str, port: int) -> list[str]:
    """Every address the host resolves to, each allowed; a host with any other is refused."""
    allow_loopback = settings.ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK
    try:
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise CIMDError(f"host {host!r} does not resolve") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    for address in addresses:
        if not address_allowed(address, allow_loopback):
            raise CIMDError(f"host {host!r} resolves to {address}, which is not public")
    if not addresses:
        raise CIMDError(f"host {host!r} does not resolve")
    return addresses


def cache_lifetime(cache_control: str) -> int:
    floor = oauth2_settings.CIMD_METADATA_MIN_AGE_SECONDS
    ceiling = oauth2_settings.CIMD_METADATA_MAX_AGE_SECONDS
    lowered = cache_control.lower()
    found = MAX_AGE.search(lowered)
    if "no-store" in lowered or "no-cache" in lowered:
        age = floor
    else:
        age = int(found.group(1)) if found else ceiling
    return max(floor, min(age, ceiling))


def download(url: SplitResult, address: str, deadline: float) -> tuple[dict[str, Any], int]:
    """GET the document from `address`, with SNI, certificate check and Host for the host."""
    limit = oauth2_settings.CIMD_MAX_DOCUMENT_SIZE
    host = f"[{address}]" if ":" in address else address
    target = f"https://{host}:{url.port or 443}{url.path}" + (f"?{url.query}" if url.query else "")
    timeout = httpx.Timeout(max(0.1, deadline - time.monotonic()))
    # Not the environment's proxies: the connection must reach the address just checked.
    # The certificate store is certifi's, or SSL_CERT_FILE when set.
    tls = httpx.create_ssl_context(trust_env=True)
    with (
        httpx.Client(verify=tls, timeout=timeout, follow_redirects=False, trust_env=False) as http,
        http.stream(
            "GET",
            target,
            headers={"Host": url.netloc, "Accept": "application/json"},
            extensions={"sni_hostname": url.hostname},
        ) as response,
    ):
        if response.status_code != 200:
            raise CIMDError(f"answered HTTP {response.status_code} (redirects are not followed)")
        media_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media_type != "application/json" and not (
            media_type.startswith("application/") and media_type.endswith("+json")
        ):
            raise CIMDError(f"answered {media_type or 'no Content-Type'}, not application/json")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise CIMDError(f"declares {declared} bytes; at most {limit} are read")
        body = bytearray()
        for chunk in response.iter_bytes():
            body.extend(chunk)
            if len(body) > limit:
                raise CIMDError(f"is larger than {limit} bytes")
            if time.monotonic() > deadline:
                raise CIMDError("took longer than the fetch deadline")
        cache_control = response.headers.get("Cache-Control", "")
    try:
        document = json.loads(bytes(body))
    except ValueError as exc:
        raise CIMDError("is not valid JSON") from exc
    if not isinstance(document, dict):
        raise CIMDError("is not a JSON object")
    return document, cache_lifetime(cache_control)


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


class MetadataFetcher:
    """CIMD_METADATA_FETCHER: (document, seconds to cache it) for a client_id URL."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            url = checked_url(client_id)
            deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
            addresses = checked_addresses(url.hostname or "", url.port or 443)
            document, max_age = self._first_answer(url, addresses, deadline)
            check_document(client_id, document)
        except CIMDError as refused:
            log.warning("Client ID Metadata Document %s refused: it %s", client_id[:300], refused)
            raise
        return document, max_age

    def _first_answer(
        self, url: SplitResult, addresses: list[str], deadline: float
    ) -> tuple[dict[str, Any], int]:
        failed = "no address answered"
        for address in addresses:
            if time.monotonic() >= deadline:
                break
            try:
                return download(url, address, deadline)
            except httpx.TimeoutException:
                failed = "took longer than the fetch deadline"
            except (httpx.HTTPError, OSError) as exc:
                failed = f"could not be fetched from {address} ({type(exc).__name__})"
        raise CIMDError(failed)


class UnclaimedCapPermission:
    """CIMD_REGISTRATION_PERMISSION_CLASSES: a new client counts against the unclaimed cap;
    refreshing one already known never does."""

    def has_permission(self, request: Any, client_id: str) -> bool:
        if get_application_model().objects.filter(client_id=client_id).exists():
            return True
        if unclaimed_cap_reached():
            log.warning("Client ID Metadata Document %s refused: %s", client_id, cap_refusal_text())
            return False
        return True
