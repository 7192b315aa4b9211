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
import ssl
import threading
from collections.abc import Iterator
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
    hold: bool = False  # answer only when the test ends: a server that never replies in time


class DocumentServer:
    """Serves metadata documents over https and records every path asked for."""

    def __init__(self, tls: Tls) -> None:
        self.routes: dict[str, Route] = {}
        self.requested: list[str] = []
        self.released = threading.Event()
        documents = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                documents.requested.append(self.path)
                route = documents.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                if route.hold:
                    documents.released.wait(30)
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
        self.released.set()
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
    yield from cimd_server(tmp_path, tls, ANCHOR_OAUTH_CIMD_ALLOW_LOOPBACK="true")


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
    documents.routes["/slow.json"] = Route(b"{}", hold=True)
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
        "/slow.json": "took longer than the fetch deadline",
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


# --- the parts a black-box test cannot reach cheaply -----------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo hiding 10.0.0.1
        "::ffff:169.254.169.254",
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
    ],
)
def test_ipv4_hidden_in_other_forms_is_judged_as_itself(address):
    assert not address_allowed(address, allow_loopback=True)
    assert address_allowed("93.184.215.14", allow_loopback=False)


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
