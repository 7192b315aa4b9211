"""The URLconf anchor_site.urls builds with ANCHOR_HTTP_AUTH=none and DEBUG on."""

from django.urls import path

from anchor_site.http.views import OpenDebugMCPView

urlpatterns = [path("mcp", OpenDebugMCPView.as_view(), name="mcp")]
