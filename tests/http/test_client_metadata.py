"""Client ID Metadata Documents against the production server: a client whose client_id is the
https URL of its metadata signs a person in with PKCE and the resource, the person consents,
the code buys a token that works on /mcp; and every document or address the server must not
trust is refused before any client row is made.

The document is served over https from this machine by a small server with a certificate from
a throw-away authority, which the production server is told to trust (SSL_CERT_FILE); the test
setting ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK lets it connect to 127.0.0.1 at all.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from anchor_site.oauth.client_metadata import address_allowed
from tests.http.oauth_browser import Browser, pkce_pair, redirect_query
from tests.http.test_live_server import LiveServer, serve
from tests.http.test_oauth_flow import (
    PASSWORD,
    REDIRECT_URI,
    authorize_url,
    exchange,
    mcp_status,
)
from tests.polling import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LIST_CLIENTS = (
    "from oauth2_provider.models import Application; "
    "print(sorted(Application.objects.values_list('client_id', flat=True)))"
)


# --- a throw-away certificate authority and a document server on 127.0.0.1 ----------------


@dataclass
class Tls:
    authority: Path
    certificate: Path
    key: Path


def _pem(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def make_tls(directory: Path) -> Tls:
    now = datetime.now(UTC)
    authority_key = ec.generate_private_key(ec.SECP256R1())
    authority_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Anchor test authority")])
    authority = (
        x509.CertificateBuilder()
        .subject_name(authority_name)
        .issuer_name(authority_name)
        .public_key(authority_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(authority_key.public_key()), critical=False
        )
        .sign(authority_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(authority_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority_key.public_key()),
            critical=False,
        )
        .sign(authority_key, hashes.SHA256())
    )
    return Tls(
        authority=_pem(directory / "ca.pem", authority.public_bytes(serialization.Encoding.PEM)),
        certificate=_pem(
            directory / "cert.pem", certificate.public_bytes(serialization.Encoding.PEM)
        ),
        key=_pem(
            directory / "key.pem",
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        ),
    )


@dataclass
class Route:
    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class DocumentServer:
    """Serves metadata documents over https and records every path asked for."""

    def __init__(self, tls: Tls) -> None:
        self.routes: dict[str, Route] = {}
        self.requested: list[str] = []
        documents = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                documents.requested.append(self.path)
                route = documents.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(OSError):  # the server under test gave up, as it should
                    self.wfile.write(route.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.certificate, tls.key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.origin = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return self.origin + path

    def document(self, path: str, **overrides: Any) -> str:
        """Serve a valid document at `path` (with overrides) and return its client_id URL."""
        client_id = self.url(path)
        metadata = {
            "client_id": client_id,
            "client_name": "Metadata document client",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **overrides,
        }
        self.routes[path] = Route(json.dumps(metadata).encode())
        return client_id

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def tls(tmp_path) -> Tls:
    return make_tls(tmp_path)


@pytest.fixture
def documents(tls) -> Iterator[DocumentServer]:
    server = DocumentServer(tls)
    yield server
    server.close()


def cimd_server(tmp_path: Path, tls: Tls, **env: str) -> Iterator[LiveServer]:
    yield from serve(
        tmp_path,
        workers=1,
        SSL_CERT_FILE=str(tls.authority),
        ANCHOR_OAUTH_CIMD_TIMEOUT_S="1",
        **env,
    )


@pytest.fixture
def live(tmp_path, tls) -> Iterator[LiveServer]:
    # Each URL tried is a new client, charged to loopback's registration budget.
    yield from cimd_server(
        tmp_path,
        tls,
        ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK="true",
        ANCHOR_OAUTH_REGISTRATION_RATE="100/hour",
    )


@pytest.fixture
def live_without_loopback(tmp_path, tls) -> Iterator[LiveServer]:
    yield from cimd_server(tmp_path, tls)


def clients_on(live: LiveServer) -> str:
    """The client_ids the server holds (the shell prints a banner line first)."""
    return live.manage("shell", "-c", LIST_CLIENTS).strip().splitlines()[-1]


def person(live: LiveServer) -> Browser:
    """Alice in team-a with a password, made in one `manage.py shell` run by the services
    `anchor_member add --create-user` calls (the command itself is test_commands'): a second
    Django start-up would add only its cost."""
    live.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        "from records.services import workspace_membership_add; "
        f"u = get_user_model().objects.create_user(username='alice', password={PASSWORD!r}); "
        "workspace_membership_add(user=u, workspace_id='team-a')",
    )
    return Browser(live.url, "alice", PASSWORD)


def server_metadata(live: LiveServer) -> dict[str, Any]:
    metadata = httpx.get(f"{live.url}/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["registration_endpoint"] == f"{live.url}/oauth/register/", "DCR stays"
    return metadata


def refused_page(browser: Browser, url: str) -> str:
    """The authorization page for an unusable client: an error page, never a redirect."""
    answered = browser.open_consent(url)
    assert answered.status_code == 400, f"{answered.status_code}: {answered.text[:500]}"
    assert "Location" not in answered.headers
    return answered.text


# --- the flow ---------------------------------------------------------------------------------


def test_a_metadata_document_client_authorizes_and_calls_mcp(live, documents):
    server = server_metadata(live)
    client_id = documents.document("/oauth/client.json")
    browser = person(live)
    try:
        verifier, challenge = pkce_pair()
        consent = browser.consent(authorize_url(server, client_id, challenge))
        assert "Metadata document client" in consent.page, "the document's name is shown"
        document_host = documents.origin.removeprefix("https://")
        assert f'from <strong class="anchor-document-host">{document_host}</strong>' in (
            consent.page
        ), "and, as prominently, the host that vouches for it"
        assert "127.0.0.1:33418" in consent.page
        answered = browser.answer(consent, allow=True)
        assert answered.status_code == 302, answered.text[:500]
        query = redirect_query(answered)
        assert query["state"] == "xyz" and query["iss"] == server["issuer"]

        issued = exchange(server, client_id, query["code"], verifier)
        assert issued.status_code == 200, issued.text
        assert mcp_status(live.url, issued.json()["access_token"]) == 200

        # A second authorization uses the cached document, and consent is asked again.
        verifier, challenge = pkce_pair()
        again = browser.consent(authorize_url(server, client_id, challenge))
        assert "Metadata document client" in again.page
    finally:
        browser.close()
    assert documents.requested == ["/oauth/client.json"], "fetched once, then cached"
    assert clients_on(live) == repr([client_id])
    assert "Traceback" not in live.log.read_text()


def test_documents_and_addresses_the_server_must_not_trust_are_refused(live, documents):
    server = server_metadata(live)
    _, challenge = pkce_pair()
    documents.document("/mismatch.json", client_id=documents.url("/someone-else.json"))
    documents.routes["/large.json"] = Route(
        json.dumps({"client_id": documents.url("/large.json"), "pad": "x" * 20_000}).encode()
    )
    documents.routes["/moved.json"] = Route(
        b"", status=302, headers={"Location": documents.url("/oauth/client.json")}
    )
    documents.routes["/page.json"] = Route(b"<html></html>", content_type="text/html")
    documents.document("/sniffable.json", redirect_uris=["http://app.example/callback"])
    documents.document("/smuggled.json", redirect_uris=[REDIRECT_URI + " http://evil.example/"])
    documents.document("/secret.json", token_endpoint_auth_method="client_secret_basic")
    documents.document("/implicit.json", response_types=["token"])
    cases = {
        "/mismatch.json": "names another client_id",
        "/large.json": "bytes",
        "/moved.json": "HTTP 302",
        "/page.json": "not application/json",
        "/sniffable.json": "plain http to another machine",
        "/smuggled.json": "whitespace",
        "/secret.json": "token_endpoint_auth_method",
        "/implicit.json": "response_types",
    }
    never_fetched = {
        "https://10.0.0.1/client.json": "resolves to 10.0.0.1, which is not public",
        "https://169.254.169.254/latest/meta-data": "not public",
        "https://[fd00::1]/client.json": "not public",
        "https://[::ffff:192.168.1.1]/client.json": "not public",
        # IPv4-compatible, IPv4-translated, local-use NAT64 and site-local spellings
        "https://[::127.0.0.1]/client.json": "host '::127.0.0.1' resolves to",
        "https://[::ffff:0:7f00:1]/client.json": "host '::ffff:0:7f00:1' resolves to",
        "https://[64:ff9b:1::a00:1]/client.json": "host '64:ff9b:1::a00:1' resolves to",
        "https://[fec0::1]/client.json": "host 'fec0::1' resolves to",
        documents.url("/oauth/client.json").replace("https:", "http:"): None,
        documents.url("/with#fragment"): "fragment",
    }
    browser = person(live)
    try:
        for path, reason in cases.items():
            refused_page(browser, authorize_url(server, documents.url(path), challenge))
            assert reason in live.log.read_text(), f"{path}: the log says why ({reason})"
        requested = list(documents.requested)
        for unfetched, why in never_fetched.items():
            refused_page(browser, authorize_url(server, unfetched, challenge))
            if why:
                assert why in live.log.read_text(), f"{unfetched}: the log says {why}"
        assert documents.requested == requested, "nothing was fetched for those"

        # A valid document whose callbacks do not include the one asked for.
        listed = documents.document("/listed.json")
        foreign = authorize_url(
            server, listed, challenge, redirect_uri="http://127.0.0.1:33418/elsewhere"
        )
        refused_page(browser, foreign)
    finally:
        browser.close()
    assert clients_on(live) == repr([listed])
    assert "Traceback" not in live.log.read_text()


def test_without_the_test_setting_a_loopback_document_is_refused(live_without_loopback, documents):
    live = live_without_loopback
    server = server_metadata(live)
    client_id = documents.document("/oauth/client.json")
    browser = person(live)
    try:
        refused_page(browser, authorize_url(server, client_id, pkce_pair()[1]))
    finally:
        browser.close()
    assert "resolves to 127.0.0.1, which is not public" in live.log.read_text()
    assert documents.requested == []
    assert clients_on(live) == "[]"


# --- a document server that never finishes its headers ------------------------------------


class TrickleServer:
    """Completes the TLS handshake, reads the request, then sends a response's headers one
    byte every 0.2 s for as long as the connection lasts (or the test): a server that would
    hold a fetch, and whatever the fetching request holds, for as long as it likes."""

    HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 10_000

    def __init__(self, tls: Tls) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(tls.certificate, tls.key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.origin = f"https://127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted = 0
        self.hung_up_on = 0  # connections the other side closed
        self.lock = threading.Lock()
        self.done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return self.origin + path

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                self.accepted += 1
            threading.Thread(target=self._trickle, args=(raw,), daemon=True).start()

    def _trickle(self, raw: socket.socket) -> None:
        try:
            with self.context.wrap_socket(raw, server_side=True) as tls_socket:
                tls_socket.recv(65536)
                for index in range(len(self.HEADERS)):
                    tls_socket.sendall(self.HEADERS[index : index + 1])
                    if self.done.wait(0.2):
                        return
        except OSError:
            with self.lock:
                self.hung_up_on += 1

    def close(self) -> None:
        self.done.set()
        self.listener.close()


@pytest.fixture
def trickle(tls) -> Iterator[TrickleServer]:
    server = TrickleServer(tls)
    yield server
    server.close()


def ask_for_token(server: dict[str, Any], client_id: str) -> httpx.Response:
    """A token request naming a client_id: the first sight of a document URL fetches it."""
    return httpx.post(
        server["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "code": "made-up",
            "redirect_uri": REDIRECT_URI,
            "code_verifier": "v" * 43,
        },
        timeout=60,
    )


def test_a_server_trickling_its_headers_is_dropped_at_the_deadline(live, trickle):
    """One deadline (1 s here) over the whole exchange: a byte every 0.2 s does not renew it.
    The host that did not answer then costs no fetch under any other URL."""
    server = server_metadata(live)
    answered = ask_for_token(server, trickle.url("/slow.json"))
    assert answered.status_code == 401, answered.text
    assert answered.json()["error"] == "invalid_client"
    wait_until(lambda: trickle.hung_up_on == 1, "the server under test to hang up")
    assert "slow.json refused: it took longer than the fetch deadline" in live.log.read_text()

    again = ask_for_token(server, trickle.url("/another.json"))
    assert again.status_code == 401, again.text
    assert trickle.accepted == 1, "the silent host was not asked again"
    assert "did not answer in time lately" in live.log.read_text()
    assert "Traceback" not in live.log.read_text()


@pytest.fixture
def live_slow_fetches(tmp_path, tls) -> Iterator[LiveServer]:
    # A deadline long enough to keep fetches in flight while /mcp is called; a short wait for
    # a pooled connection, so a fetch holding one would show as a 503 at once.
    yield from serve(
        tmp_path,
        workers=1,
        SSL_CERT_FILE=str(tls.authority),
        ANCHOR_OAUTH_CIMD_TIMEOUT_S="120",
        ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK="true",
        ANCHOR_DB_POOL_TIMEOUT_S="2",
    )


def test_slow_fetches_take_no_database_connection_and_past_the_cap_are_refused_at_once(
    live_slow_fetches, trickle
):
    """Eight token requests naming new URLs on the trickling server: two fetch (the cap, half
    the four pooled connections), six are told at once to retry; meanwhile a token's /mcp
    calls go through, the fetches holding no database connection."""
    live = live_slow_fetches
    server = server_metadata(live)
    token = live.token_for("dana", "team-a")
    cap = 2
    with ThreadPoolExecutor(8) as pool:
        asked = [pool.submit(ask_for_token, server, trickle.url(f"/c{n}.json")) for n in range(8)]
        wait_until(
            lambda: sum(f.done() for f in asked) == 8 - cap, "the requests over the cap answered"
        )
        wait_until(lambda: trickle.accepted == cap, "two fetches in flight")
        for answer in [f.result() for f in asked if f.done()]:
            assert answer.status_code == 503, answer.text
            assert answer.json()["error"] == "temporarily_unavailable"
            assert "retry" in answer.json()["error_description"]
            assert int(answer.headers["Retry-After"]) > 0
        for _ in range(6):
            assert mcp_status(live.url, token) == 200
        assert sum(f.done() for f in asked) == 8 - cap, "the two fetches were still in flight"
        assert trickle.accepted == cap
        trickle.close()  # the two in flight now fail
        finished = [f.result() for f in asked]
    assert sorted(answer.status_code for answer in finished) == [401] * cap + [503] * 6
    assert "Traceback" not in live.log.read_text()


# --- new document clients against the registration budget and the unclaimed cap ------------


@pytest.fixture
def live_small_budget(tmp_path, tls) -> Iterator[LiveServer]:
    yield from cimd_server(
        tmp_path,
        tls,
        ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK="true",
        ANCHOR_OAUTH_REGISTRATION_RATE="4/hour",
        ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS="2",
    )


def register(live: LiveServer) -> httpx.Response:
    return httpx.post(
        f"{live.url}/oauth/register/",
        json={"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
    )


def test_new_document_clients_spend_the_registration_budget_and_give_way_to_registrations(
    live_small_budget, documents
):
    live = live_small_budget
    server = server_metadata(live)
    first, second, third = (documents.document(f"/{name}.json") for name in ("a", "b", "c"))
    for client_id in (first, second):  # budget 2 of 4 spent; the cap of 2 is full
        assert ask_for_token(server, client_id).json()["error"] == "invalid_grant"
    assert clients_on(live) == repr(sorted([first, second]))

    registered = register(live)  # 3 of 4: the oldest unused document client gives way
    assert registered.status_code == 201, registered.text
    assert clients_on(live) == repr(sorted([second, registered.json()["client_id"]]))
    assert ask_for_token(server, first).json()["error"] == "invalid_grant"  # 4 of 4
    assert clients_on(live) == repr(sorted([first, registered.json()["client_id"]]))

    over = ask_for_token(server, third)
    assert over.status_code == 429, over.text
    assert over.json()["error"] == "too_many_requests"
    assert "ANCHOR_OAUTH_REGISTRATION_RATE" in over.json()["error_description"]
    assert 1 <= int(over.headers["Retry-After"]) <= 3600
    assert register(live).status_code == 429, "one budget for both ways in"
    assert "/c.json" not in documents.requested, "refused before any fetch"
    # A client already known costs nothing.
    assert ask_for_token(server, first).json()["error"] == "invalid_grant"
    assert "Traceback" not in live.log.read_text()


# --- the parts a black-box test cannot reach cheaply -----------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo hiding 10.0.0.1
        "::127.0.0.1",  # IPv4-compatible
        "::8.8.8.8",  # IPv4-compatible: deprecated, whatever it holds
        "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1
        "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
        "64:ff9b:1::a00:1",  # local-use NAT64
        "64:ff9b:1::808:808",
        "fec0::1",  # site-local
        "::ffff:127.0.0.1",  # mapped loopback (allowed only with the test setting)
        "ff0e::1",  # global multicast
        "::ffff:169.254.169.254",
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
    ],
)
def test_ipv4_hidden_in_other_forms_is_judged_as_itself(address):
    assert not address_allowed(address, allow_loopback=False)
    if address != "::ffff:127.0.0.1":
        assert not address_allowed(address, allow_loopback=True)
    for public in ("93.184.215.14", "::ffff:8.8.8.8", "64:ff9b::808:808", "2606:4700::1111"):
        assert address_allowed(public, allow_loopback=False), public
    assert address_allowed("127.0.0.1", allow_loopback=True)
    assert address_allowed("::1", allow_loopback=True)


def test_a_new_document_client_is_refused_at_the_unclaimed_cap_without_a_fetch(
    client, settings, django_user_model, caplog
):
    settings.ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS = 1
    registered = client.post(
        "/oauth/register/",
        data=json.dumps({"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}),
        content_type="application/json",
    )
    assert registered.status_code == 201
    client.force_login(django_user_model.objects.create_user(username="alice"))
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    _, challenge = pkce_pair()
    url = authorize_url(metadata, "https://203.0.113.7/client.json", challenge)
    with caplog.at_level("WARNING", logger="anchor_site.oauth.client_metadata"):
        answered = client.get(url)
    assert answered.status_code == 400
    assert "ANCHOR_OAUTH_MAX_UNCLAIMED_CLIENTS" in caplog.text
    assert "could not be fetched" not in caplog.text, "refused before any request"


def test_the_metadata_says_so_when_documents_are_off(client, settings):
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": False}
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is False
    assert "registration_endpoint" in metadata
