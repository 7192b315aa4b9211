"""The admin's static files from the application server (WhiteNoise over STATIC_ROOT).

The production start-up collects them first (gunicorn_conf.on_starting). Where nothing was
collected (tests, runserver, the stdio server) the middleware steps aside instead of warning on
every start; runserver serves static files itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import MiddlewareNotUsed
from whitenoise.middleware import WhiteNoiseMiddleware


class CollectedStaticMiddleware(WhiteNoiseMiddleware):
    def __init__(self, get_response: Any = None, settings: Any = django_settings) -> None:
        if not settings.STATIC_ROOT or not Path(settings.STATIC_ROOT).is_dir():
            raise MiddlewareNotUsed("STATIC_ROOT has not been collected; not serving static.")
        super().__init__(get_response, settings)
