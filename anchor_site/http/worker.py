"""The gunicorn worker for team mode: uvicorn serving the ASGI application.

uvicorn's own defaults pick optional C extensions when installed; pinning the pure-Python
protocol and the standard event loop keeps every deployment on the configuration the tests run.
Django answers no ASGI lifespan events, so uvicorn is told not to send them.
"""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker


class AnchorUvicornWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {"loop": "asyncio", "http": "h11", "lifespan": "off"}
