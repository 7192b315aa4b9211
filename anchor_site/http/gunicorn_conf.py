"""Team mode's production server: `uv run gunicorn -c anchor_site/http/gunicorn_conf.py`.

Before any worker starts, the master runs the deploy checks (refusing to serve on an error),
applies migrations and collects static files. Workers are uvicorn serving the ASGI application.
ANCHOR_HTTP_BIND and WEB_CONCURRENCY size the server; command-line options override them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anchor_site.settings")
# Set before the master loads the settings (workers inherit them): see anchor_site/asgi.py.
os.environ.setdefault("ANCHOR_DB_CONN_MAX_AGE", "0")


def _positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        sys.exit(f"{name}={raw!r} is not a positive whole number.")
    return int(raw)


wsgi_app = "anchor_site.asgi:application"  # gunicorn's name for the app, ASGI or not
# Loopback by default: expose it through a TLS-terminating proxy, or bind 0.0.0.0 on purpose.
bind = [os.environ.get("ANCHOR_HTTP_BIND", "127.0.0.1:8000")]
workers = _positive_int("WEB_CONCURRENCY", 2)
worker_class = "anchor_site.http.worker.AnchorUvicornWorker"
timeout = 60
graceful_timeout = 20
# The control socket's default path is shared by every gunicorn of the user; we do not use it.
control_socket_disable = True
accesslog = "-"
errorlog = "-"


def on_starting(server: Any) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError
    from django.db import connections

    from anchor_site.db_pool import close_pools

    try:
        call_command("check", deploy=True, fail_level="ERROR", stdout=sys.stderr)
    except SystemCheckError as exc:
        sys.stderr.write(f"{exc}\nRefusing to serve until the errors above are fixed.\n")
        raise SystemExit(1) from None
    call_command("migrate", interactive=False, verbosity=1, stdout=sys.stderr)
    call_command("collectstatic", interactive=False, verbosity=0, stdout=sys.stderr)
    # Forked workers must not inherit connections, nor a pool whose threads a fork loses.
    connections.close_all()
    close_pools()
