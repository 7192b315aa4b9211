"""The admin's static files from the application server (WhiteNoise).

The production start-up collects them into STATIC_ROOT (gunicorn_conf.on_starting). Where
nothing was collected (runserver without DEBUG, tests) WhiteNoise finds them in the apps
themselves (WHITENOISE_USE_FINDERS), so the admin is styled either way; the "no directory"
warning for the uncollected STATIC_ROOT says nothing useful then and is silenced.
"""

from __future__ import annotations

import warnings
from typing import Any

from django.conf import settings as django_settings
from whitenoise.middleware import WhiteNoiseMiddleware


class CollectedStaticMiddleware(WhiteNoiseMiddleware):
    def __init__(self, get_response: Any = None, settings: Any = django_settings) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="No directory at")
            super().__init__(get_response, settings)
