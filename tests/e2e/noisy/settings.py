"""Anchor's settings plus the noisy app; selected per subprocess with DJANGO_SETTINGS_MODULE."""

import sys

from anchor_site.settings import *  # noqa: F403
from anchor_site.settings import INSTALLED_APPS

print("STRAY-SETTINGS from settings import")  # noqa: T201 - the stray output under test
sys.stdout.flush()

# Before workflow, whose ready() fixes the tool list: the noisy tool must be registered by then.
_workflow = INSTALLED_APPS.index("workflow")
INSTALLED_APPS = [
    *INSTALLED_APPS[:_workflow],
    "tests.e2e.noisy.apps.NoisyConfig",
    *INSTALLED_APPS[_workflow:],
]
