"""This server as an OAuth protected resource (RFC 9728): its identifier and metadata.

The resource is `https://<host>/mcp` as the client reaches it, built from the request (a TLS
proxy passing Host and X-Forwarded-Proto needs no setting); every token must be bound to it.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from oauth2_provider.views import OAuthProtectedResourceMetadataView

MCP_SCOPE = "mcp"


def mcp_resource(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("mcp"))


def resource_metadata_url(request: HttpRequest) -> str:
    """The path-suffixed form (RFC 9728 §3.1) for /mcp; the root form says the same."""
    return request.build_absolute_uri(
        reverse("oauth2_provider:oauth-resource-metadata-path", args=["mcp"])
    )


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """Both /.well-known/oauth-protected-resource and its /mcp-suffixed form describe /mcp:
    the server has no other protected resource. Its authorization server is the toolkit's
    default, this origin (the RFC 8414 document is at the origin's root)."""

    def get_resource(self, request: HttpRequest) -> str:
        return mcp_resource(request)

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        suffix = kwargs.get("resource_path")
        if suffix is not None and suffix.strip("/") != "mcp":
            return JsonResponse({"error": "not_found"}, status=404)
        return super().get(request, *args, **kwargs)
