"""The people-facing half of the authorization server: sign-in and consent, in the admin's style.

Sign-in takes any active user with a password. Consent names the client, where it sends the
code, and the workspaces the token will reach (the person's memberships); the request must use
PKCE with S256 and name this server's /mcp as resource. Consent is asked every time, except for
a client an active superuser registered to skip it. Every redirect back names this server as
issuer (RFC 9207).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.http import HttpRequest
from django.shortcuts import render
from django.urls import reverse
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import Application
from oauth2_provider.oauth2_backends import _add_iss_to_redirect
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from anchor_site.http.workspace import workspaces_of
from anchor_site.oauth.resource import mcp_resource

PKCE_METHOD = "S256"


def _refusal(error: str, description: str, credentials: dict[str, Any]) -> OAuthToolkitError:
    # Raised only after the toolkit validated client_id and redirect_uri, so redirecting the
    # error to the client is safe (RFC 6749 §4.1.2.1).
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error=error, description=description, state=credentials.get("state")
        ),
        redirect_uri=credentials.get("redirect_uri"),
    )


def check_resource(request: HttpRequest, resources: list[str], credentials: dict[str, Any]) -> None:
    expected = mcp_resource(request)
    if resources != [expected]:
        raise _refusal(
            "invalid_target",
            f"Send resource={expected} (RFC 8707): tokens from this server are only for it.",
            credentials,
        )


def consent_may_be_skipped(application: Any) -> bool:
    """Only a superuser registers a client that skips consent, and only while they are one."""
    owner = application.user if application.skip_authorization else None
    return bool(owner is not None and owner.is_active and owner.is_superuser)


class ConsentRequired(Exception):
    """The toolkit was about to approve without asking; the consent page is shown instead."""


class ConsentView(AuthorizationView):
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().get(request, *args, **kwargs)
        except ConsentRequired:
            # The toolkit kept the page's context in oauth2_data before approving unasked.
            return self.render_to_response(self.get_context_data(**self.oauth2_data))

    def redirect(self, redirect_to: str, application: Any) -> Any:
        # Every redirect of this view is an authorization response, a code or an error, and
        # names this server as issuer exactly once (RFC 9207 §2); the toolkit's only the code.
        if oauth2_settings.COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS:
            issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
            redirect_to = _add_iss_to_redirect(redirect_to, issuer)
        return super().redirect(redirect_to, application)

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        if credentials.get("code_challenge_method") != PKCE_METHOD:
            raise _refusal(
                "invalid_request",
                "Use PKCE with code_challenge_method=S256; no other method is accepted.",
                credentials,
            )
        check_resource(request, request.GET.getlist("resource"), credentials)
        return scopes, credentials

    def create_authorization_response(
        self, request: HttpRequest, scopes: Any, credentials: dict[str, Any], allow: bool
    ) -> Any:
        # On GET the person has not answered: the toolkit is approving on its own, for
        # "skip authorization" or an earlier consent. Only a superuser's client may skip.
        if request.method != "POST":
            client_id = credentials["client_id"]
            application = Application.objects.select_related("user").get(client_id=client_id)
            if not consent_may_be_skipped(application):
                raise ConsentRequired
        # The consent form carries the resource in a hidden field, which can be edited.
        if allow:
            check_resource(request, list(credentials.get("resource") or []), credentials)
        return super().create_authorization_response(request, scopes, credentials, allow)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context["title"] = "Allow access to Anchor"
        if self.request.user.is_authenticated:
            context["workspaces"] = workspaces_of(self.request.user)
        redirect_uri = context.get("redirect_uri") or ""
        context["redirect_host"] = urlsplit(redirect_uri).netloc or redirect_uri
        application = context.get("application")
        if (
            application is not None
            and application.registration_source == application.RegistrationSource.CIMD
        ):
            # Anyone may publish a document with any name: the host is what vouches for it.
            context["document_host"] = urlsplit(application.client_id).netloc
        return context


class SignInView(LoginView):
    """Sign-in, usually on the way to consent (``next``); without it staff land in the admin."""

    template_name = "oauth2_provider/sign_in.html"
    redirect_authenticated_user = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        signed_in = request.user.is_authenticated
        if signed_in and request.method == "GET" and not self.get_redirect_url():
            context = {**admin.site.each_context(request), "title": "Signed in to Anchor"}
            return render(request, "oauth2_provider/signed_in.html", context)
        return super().dispatch(request, *args, **kwargs)

    def get_default_redirect_url(self) -> str:
        if self.request.user.is_staff:
            return reverse("admin:index")
        return self.request.path

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context["title"] = "Sign in to Anchor"
        return context
