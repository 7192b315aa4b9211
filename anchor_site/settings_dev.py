"""Developer settings: the production settings plus the developer tools (benchmarks, walkthrough),
which a deployment never loads (`DJANGO_SETTINGS_MODULE=anchor_site.settings_dev`).
"""

from __future__ import annotations

from anchor_site.settings import *  # noqa: F403
from anchor_site.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "anchor_site.devtools"]
