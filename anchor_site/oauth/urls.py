"""Routes of the authorization server, under django-oauth-toolkit's namespace so its views can
reverse one another: the two well-known documents at the origin's root (RFC 8414 and RFC 9728,
where MCP clients look), everything else under /oauth/."""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as toolkit

from anchor_site.oauth.registration import RegistrationManagementView, RegistrationView
from anchor_site.oauth.resource import ProtectedResourceMetadataView
from anchor_site.oauth.views import ConsentView, SignInView

app_name = "oauth2_provider"
urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        toolkit.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    path("oauth/token/", toolkit.TokenView.as_view(), name="token"),
    path("oauth/revoke/", toolkit.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    path("oauth/sign-in/", SignInView.as_view(), name="sign-in"),
]
