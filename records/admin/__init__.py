"""The Django admin over the store: read it, and write only through records.services.

Each person sees only the workspaces they are a member of (records.admin.scoping); superusers
see every workspace. Importing the modules registers their ModelAdmin classes with the default
site.
"""

from django.contrib import admin

from records.admin import access, audit, catalog, links, people, record_admin  # noqa: F401

admin.site.site_header = "Anchor"
admin.site.site_title = "Anchor admin"
admin.site.index_title = "What your agents remember, and what they changed"
