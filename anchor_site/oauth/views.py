"""The people-facing half of the authorization server: sign-in and consent, in the admin's style.

Sign-in takes any active user with a password (team members are rarely admin staff; the
admin's own login would turn them away). Consent names the client, where it sends the code,
and the workspaces the token will reach, which are the person's memberships, as with personal
tokens. Before anything is shown, the request must be one the MCP authorization spec allows:
PKCE with S256, and the resource indicator naming this server's /mcp.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.http import HttpRequest
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from anchor_site.oauth.resource import mcp_resource
from records.models.membership import WorkspaceMembership

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


class ConsentView(AuthorizationView):
    template_name = "oauth2_provider/authorize.html"

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
        # The consent form carries the resource in a hidden field, which can be edited.
        if allow:
            check_resource(request, list(credentials.get("resource") or []), credentials)
        return super().create_authorization_response(request, scopes, credentials, allow)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context["title"] = "Allow access to Anchor"
        if self.request.user.is_authenticated:
            context["workspaces"] = list(
                WorkspaceMembership.objects.filter(user=self.request.user)
                .order_by("workspace_id")
                .values_list("workspace_id", flat=True)
            )
        redirect_uri = context.get("redirect_uri") or ""
        context["redirect_host"] = urlsplit(redirect_uri).netloc or redirect_uri
        return context


class SignInView(LoginView):
    template_name = "oauth2_provider/sign_in.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context["title"] = "Sign in to Anchor"
        return context
