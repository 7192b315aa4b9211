"""Developer settings: the production settings plus the developer tools (benchmarks, walkthrough).

`DJANGO_SETTINGS_MODULE=anchor_site.settings_dev python manage.py benchmark` (or
`walkthrough`). The production settings leave the tools out, so a deployment never loads them
or their dev-only dependencies (tiktoken).
"""

from __future__ import annotations

from anchor_site.settings import *  # noqa: F403
from anchor_site.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "anchor_site.devtools"]
