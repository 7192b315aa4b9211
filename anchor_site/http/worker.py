"""The gunicorn worker for team mode: uvicorn serving the ASGI application.

Pure-Python protocol and the standard event loop (the configuration the tests run), no lifespan
events (Django answers none). X-Forwarded-For and -Proto are trusted only when
ANCHOR_BEHIND_TLS_PROXY is on, or anyone on the machine could pick the address rate limits count.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from uvicorn_worker import UvicornWorker


class AnchorUvicornWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {"loop": "asyncio", "http": "h11", "lifespan": "off"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Read here, not at import: the master has loaded the settings by the time it makes
        # workers (anchor_site/http/gunicorn_conf.py, on_starting).
        proxy_headers = settings.ANCHOR_BEHIND_TLS_PROXY
        self.CONFIG_KWARGS = {**self.CONFIG_KWARGS, "proxy_headers": proxy_headers}
        super().__init__(*args, **kwargs)
