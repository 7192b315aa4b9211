"""ASGI entry point: what team mode's production server runs (anchor_site/http/gunicorn_conf.py).

Django's ASGI handler reads a request's whole body on the event loop before any of the
(synchronous) application runs on a thread, so a client that sends its body slowly, or never,
holds a coroutine and a socket but no thread: it cannot starve the others. A body over the limit
is refused before it is read (anchor_site/http/body_limit.py).
"""

import os

from django.core.asgi import get_asgi_application

from anchor_site.http.body_limit import BodyLimit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
# Each request's synchronous part runs on a thread of its own here, so a database connection
# kept for reuse would be left behind with a finished thread: one connection per request.
os.environ.setdefault("ANCHOR_DB_CONN_MAX_AGE", "0")
application = BodyLimit(get_asgi_application())
