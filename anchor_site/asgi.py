"""ASGI entry point of team mode's production server (anchor_site/http/gunicorn_conf.py): a body
is read on the event loop before a thread is given, so slow clients starve nothing; one over the
limit is refused unread (anchor_site/http/body_limit.py).
"""

import os

from django.core.asgi import get_asgi_application

from anchor_site.http.body_limit import BodyLimit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
# Each request's synchronous part runs on a thread of its own here, so a database connection
# kept for reuse would be left behind with a finished thread: one connection per request.
os.environ.setdefault("ANCHOR_DB_CONN_MAX_AGE", "0")
application = BodyLimit(get_asgi_application())
