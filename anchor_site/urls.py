"""URL routes: the admin for people. The MCP HTTP endpoint is added by team mode."""

from django.contrib import admin
from django.urls import path

urlpatterns = [
    path("admin/", admin.site.urls),
]
