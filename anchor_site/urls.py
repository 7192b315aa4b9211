"""URL routes: the admin for people, and /mcp for agents in team mode (anchor_site.http).

/mcp is mounted with token authentication, or without it only while DEBUG is on; a
configuration asking for an open endpoint without DEBUG gets no endpoint at all (and the
anchor.E003 system check says why).
"""

from django.conf import settings
from django.contrib import admin
from django.urls import path

from anchor_site.http.views import AnchorMCPView, OpenDebugMCPView

urlpatterns = [
    path("admin/", admin.site.urls),
]

if settings.ANCHOR_HTTP_AUTH == "token":
    urlpatterns.append(path("mcp", AnchorMCPView.as_view(), name="mcp"))
elif settings.DEBUG:
    urlpatterns.append(path("mcp", OpenDebugMCPView.as_view(), name="mcp"))
