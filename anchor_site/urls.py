"""URL routes: the admin for people, and /mcp for agents in team mode (anchor_site.http)."""

from django.contrib import admin
from django.urls import path

from anchor_site.http.urls import mcp_urlpatterns

urlpatterns = [
    path("admin/", admin.site.urls),
    *mcp_urlpatterns(),
]

# Every door's clients read JSON: an unanswered error is never Django's HTML page.
handler500 = "anchor_site.http.errors.server_error"
