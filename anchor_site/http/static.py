"""The admin's static files from the application server (WhiteNoise): collected at start-up, or
found in the apps (WHITENOISE_USE_FINDERS); the warning for an uncollected STATIC_ROOT is silenced.
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
