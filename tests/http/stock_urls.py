"""A URLconf that makes the mistake anchor.E004 catches: the package's own view routed."""

from django.urls import include, path

urlpatterns = [path("", include("mcp_server.urls"))]
