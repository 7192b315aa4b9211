"""WSGI entry point for application servers."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
application = get_wsgi_application()
