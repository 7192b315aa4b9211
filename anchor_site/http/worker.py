"""The gunicorn worker for team mode: uvicorn serving the ASGI application.

uvicorn's own defaults pick optional C extensions when installed; pinning the pure-Python
protocol and the standard event loop keeps every deployment on the configuration the tests run.
Django answers no ASGI lifespan events, so uvicorn is told not to send them.

uvicorn would also trust X-Forwarded-For and X-Forwarded-Proto from any connection out of
FORWARDED_ALLOW_IPS (loopback by default), so anyone on the machine could pick the client
address the rate limits count. It does so here only when ANCHOR_BEHIND_TLS_PROXY is on, that
is when the proxy in front is the only one who connects; gunicorn's --forwarded-allow-ips (or
FORWARDED_ALLOW_IPS) then names the proxy if it is not on loopback.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from uvicorn_worker import UvicornWorker

BASE_CONFIG: dict[str, Any] = {"loop": "asyncio", "http": "h11", "lifespan": "off"}


def uvicorn_config(behind_tls_proxy: bool) -> dict[str, Any]:
    return {**BASE_CONFIG, "proxy_headers": behind_tls_proxy}


class AnchorUvicornWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = BASE_CONFIG

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Read here, not at import: the master has loaded the settings by the time it makes
        # workers (anchor_site/http/gunicorn_conf.py, on_starting).
        self.CONFIG_KWARGS = uvicorn_config(settings.ANCHOR_BEHIND_TLS_PROXY)
        super().__init__(*args, **kwargs)
