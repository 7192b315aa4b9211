"""A person in a browser, for the OAuth tests: signs in, reads the consent page, allows or denies.

Plain httpx with a cookie jar, following the same pages a browser would: the authorization URL
sends a signed-out person to the sign-in page, which sends them back, and the consent form's
Allow redirects to the client with a code. Nothing here knows the server's internals.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from html import unescape
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def csrf_token(page: str) -> str:
    found = CSRF_INPUT.search(page)
    assert found, "the page has no CSRF token"
    return found.group(1)


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class Consent:
    page: str
    fields: dict[str, str]
    csrf: str
    url: str


class Browser:
    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.base_url = base_url
        self.username = username
        self.password = password
        self.http = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)

    def close(self) -> None:
        self.http.close()

    def _follow_to_consent(self, url: str) -> httpx.Response:
        response = self.http.get(url)
        if response.status_code == 302 and "/oauth/sign-in/" in response.headers["Location"]:
            self.sign_in(urljoin(url, response.headers["Location"]))
            response = self.http.get(url)
        return response

    def sign_in(self, sign_in_url: str) -> None:
        form = self.http.get(sign_in_url)
        assert form.status_code == 200, form.text
        next_url = parse_qs(urlsplit(sign_in_url).query)["next"][0]
        signed_in = self.http.post(
            sign_in_url,
            data={
                "csrfmiddlewaretoken": csrf_token(form.text),
                "username": self.username,
                "password": self.password,
                "next": next_url,
            },
        )
        assert signed_in.status_code == 302, f"sign-in failed: {signed_in.text[:2000]}"

    def open_consent(self, authorize_url: str) -> httpx.Response:
        """The authorization URL as a browser opens it: sign in if needed, then the page."""
        return self._follow_to_consent(authorize_url)

    def consent(self, authorize_url: str) -> Consent:
        page = self.open_consent(authorize_url)
        assert page.status_code == 200, f"{page.status_code}: {page.text[:2000]}"
        fields = {name: unescape(value) for name, value in HIDDEN_INPUT.findall(page.text)}
        fields.pop("csrfmiddlewaretoken", None)
        return Consent(page.text, fields, csrf_token(page.text), authorize_url)

    def answer(self, consent: Consent, *, allow: bool, **tampered: str) -> httpx.Response:
        data = {**consent.fields, **tampered, "csrfmiddlewaretoken": consent.csrf}
        if allow:
            data["allow"] = "Allow"
        return self.http.post(consent.url, data=data)

    def authorize(self, authorize_url: str) -> dict[str, str]:
        """Allow, and return the query the client's redirect URI receives (code, state)."""
        answered = self.answer(self.consent(authorize_url), allow=True)
        assert answered.status_code == 302, f"{answered.status_code}: {answered.text[:2000]}"
        return redirect_query(answered)


def redirect_query(response: httpx.Response) -> dict[str, str]:
    location = response.headers["Location"]
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
